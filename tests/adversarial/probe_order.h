// vigil_probe's "order-*" operations (probe_order.cc): calls that can see whether a file
// the command just closed is still open somewhere (a flock, an OFD lock, a read lease, an
// exec of the file), each right after a write-open vigil-init performed, many times over.
#pragma once

// `op` one of order-flock, order-ofd, order-lease, order-exec; `file` the file to write
// (the command's own); `rounds` how often. Prints "ok N" when every check held, else
// "fails K of N, first errno:NAME at round R". Returns -1 when `op` is not one of these.
int order_probe(const char* op, const char* file, long rounds);
