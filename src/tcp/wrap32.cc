// Wrap32 is header-only; this file anchors the tcp layer's library until the
// sender and receiver land.
#include "tcp/wrap32.hh"
