// vigil_probe's "fid-*" operations (probe_fidelity.cc): one emulated call in a state the
// kernel refuses it in (a full fd table, RLIMIT_FSIZE, a read-only directory, a name
// that exists, a full file system, a directory past PATH_MAX), run in the current
// directory the same way inside `vigil run` and directly, so that the two can be
// compared (tests/adversarial/fidelity_test.cc). The call's target is always the name
// "t"; the state it meets is made first, by the same probe.
#pragma once

// `op`: "fid-list" prints every case's name, one a line; "fid-CASE" makes the case's
// state, makes its call and prints "result:ok" or "result:ENAME" (or, for a call the
// kernel answers with a signal, "signal:SIGNAME"). Returns -1 when `op` is not one of these.
int fidelity_probe(const char* op);
