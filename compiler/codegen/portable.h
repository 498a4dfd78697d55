#pragma once
// `flowc build --portable`: a job directory that runs on another Linux (x86-64 or the build's
// architecture) without Flow's libraries, or anything else, installed.
//
// Not every library the runtime links ships a static archive in Debian (fmt, simdjson and
// cyrus-sasl have none), so instead of a fully static binary the directory carries the job's own
// dynamic loader and every shared library `ldd` resolves for it, glibc included:
//
//   DIR/NAME             a static launcher: runs DIR/lib/<loader> --inhibit-cache
//                        --library-path DIR/lib --argv0 <argv[0]> DIR/lib/NAME.bin <args>
//   DIR/lib/NAME.bin     the job
//   DIR/lib/*.so*        its libraries and loader, copied from the build machine
//
// The launcher finds DIR through /proc/self/exe, or its argv[0] when /proc is not mounted (an
// empty chroot), so DIR can be moved anywhere. The host's /etc/ld.so.cache and library paths are
// never consulted. What the job still reads from the host, like any program: /etc/resolv.conf and
// /etc/hosts for broker names, CA certificates for TLS (or the `ssl.ca.location` property),
// /usr/share/zoneinfo for local time.

#include <string>

namespace flow::codegen {

struct PortableResult {
  bool ok = false;
  std::string error;  // what failed, naming the library or file
  int libraries = 0;  // shared libraries copied (loader included)
};

// Makes `dir` portable around the job binary already built at `dir`/lib/`name`.bin: copies its
// libraries and loader into `dir`/lib and compiles the launcher `dir`/`name` with `cxx -static`.
// `name` must be [A-Za-z0-9._-]+ (checked).
PortableResult MakePortable(const std::string& dir, const std::string& name,
                            const std::string& cxx);

}  // namespace flow::codegen
