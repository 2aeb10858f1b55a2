// Reading the change captures' content stores (content_store.h writes them): the bytes an
// image names, from the first of a session's stores that holds a copy whose SHA-256 is
// the image's. `vigil replay --diff`, the HTML report and `vigil undo` all read through it.
//
// One session can have several stores: `vigil run` keeps <captures>/<id>, an agent
// session (session, serve, mcp) one per command, <captures>/<id>-<N> (the sandbox of
// command N writes its pre-images there). The store is content-addressed, so any copy
// that hashes to the image's sha256 is the content, whichever store holds it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "supervisor/core/events/event_schema.h"

namespace vigil {

// What the stores hold for an image: the bytes, or why there are none.
struct StoredContent {
  bool ok = false;
  std::string bytes;
  std::string why;  // "not captured: over 16 MiB", "not in the store (...)", ...
};
using StoredContentFn = std::function<StoredContent(const events::FsImage&)>;

// Reads images from `dirs` in order (each a store directory: files named by their hash,
// and packs). Every copy is checked against its hash; one that does not match is never
// returned (the next store is tried, and the answer names it). At most `max_bytes` per
// image. No dirs, or missing ones, read as "not in the store".
StoredContentFn stored_content_reader(std::vector<std::string> dirs, std::uint64_t max_bytes);

}  // namespace vigil
