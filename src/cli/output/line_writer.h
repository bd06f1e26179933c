// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Trace lines go where the traced program may write too (a shared stdout,
// a terminal, a pipe): each write() holds whole lines, at most PIPE_BUF
// bytes (which a pipe keeps together), so that the program's output falls
// between trace lines, never inside one. A single line longer than that is
// one write of its own.
//
//   write_whole_lines(STDOUT_FILENO, "line 1\nline 2\n");
#ifndef DPROBE_CLI_OUTPUT_LINE_WRITER_H_
#define DPROBE_CLI_OUTPUT_LINE_WRITER_H_

#include <string_view>

namespace dprobe::cli {

// False when the file stopped taking data (a closed pipe, a full disk),
// with errno saying why.
bool write_whole_lines(int fd, std::string_view text);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_OUTPUT_LINE_WRITER_H_
