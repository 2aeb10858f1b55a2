// Why an HTTP head was refused: the status to answer and a short reason. Its own header so
// that the small text helpers (http_text.h) need nothing else from http_head.h.
#pragma once

#include <string>

namespace vigil::proxy::http {

// Why a head was refused, and the status to answer with (400, 431, 501, 505).
struct HeadError {
  int status = 400;
  std::string message;  // short, printable, for the body and the event log
};

}  // namespace vigil::proxy::http
