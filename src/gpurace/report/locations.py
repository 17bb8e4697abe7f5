"""Which frame of a site's inlining chain a report leads with, the same in every renderer.

Text, JSON and SARIF must agree, so that a finding points at the same line
in a terminal, a script and a code-scanning view. A position inside a library
header (libcu++'s `cuda::atomic_ref`, the toolkit's `atomicAdd`) leads with
the user's own frame of its inlining chain (`frontend.ptx.debuginfo.user_frame_index`),
the line the user fixes; the library frames below it and the call sites above
it follow. Paths are written by `debuginfo.display_path` everywhere: relative
to the current directory when the file lies below it, absolute otherwise.
Inlined functions are named without return type and parameters (`function_label`);
the JSON report keeps the whole demangled signature.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpurace.frontend.demangle import function_name
from gpurace.frontend.ptx.debuginfo import user_frame_index
from gpurace.frontend.ptx.ir import SourceLoc


@dataclass(frozen=True)
class Frames:
    """A site's inlining chain split at the user's frame.

    `lead` is the frame a report leads with; `inside` the library frames
    between the user's call and the instruction, innermost first (empty
    unless the instruction is in a library header); `outside` the call
    sites `lead` was inlined at, innermost first.
    """

    lead: SourceLoc
    inside: tuple[SourceLoc, ...]
    outside: tuple[SourceLoc, ...]


def frames(loc: SourceLoc) -> Frames:
    """`loc`'s inlining chain split at the user's frame (see `Frames`)."""
    chain = loc.chain()
    i = user_frame_index(chain)
    return Frames(chain[i], chain[:i], chain[i + 1 :])


def function_label(loc: SourceLoc) -> str:
    """The inlined function a frame lies in, without return type and parameters (`cuda::atomic_ref<int>::fetch_add`);
    `code` when the PTX does not name it."""
    return function_name(loc.function) if loc.function else "code"
