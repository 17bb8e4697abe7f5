"""Modifier bookkeeping and the one error every ALU builder raises.

Builders consume the modifiers they understand one by one; whatever is left at
the end is a modifier this simulator does not implement, and the instruction is
rejected when the launch is compiled rather than producing silently wrong
values later.
"""

from __future__ import annotations

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import TYPES, Instruction

ROUNDING = ("rn", "rz", "rm", "rp")
INT_ROUNDING = ("rni", "rzi", "rmi", "rpi")
#: Packed integer types of min/max that the IR's type table does not list.
_ALU_TYPES = TYPES | {"u16x2", "s16x2"}


def unsupported(instr: Instruction, reason: str) -> UserError:
    """A UserError naming the instruction, its PTX line and its source location."""
    where = f"PTX line {instr.ptx_line}"
    if instr.loc is not None:
        where = f"{instr.loc.file}:{instr.loc.line} ({where})"
    text = instr.text.strip() or ".".join((instr.opcode, *instr.modifiers))
    return UserError(f"{where}: unsupported instruction `{text}`: {reason}")


class Mods:
    """The not-yet-consumed modifiers of one instruction."""

    def __init__(self, instr: Instruction):
        self.instr = instr
        self.left = list(instr.modifiers)

    def flag(self, name: str) -> bool:
        """Consume `name` if present."""
        if name in self.left:
            self.left.remove(name)
            return True
        return False

    def one_of(self, names: tuple[str, ...], default: str | None = None) -> str | None:
        """Consume the single modifier out of `names` that is present (or return `default`)."""
        found = [m for m in self.left if m in names]
        if len(found) > 1:
            raise self.error(f"conflicting modifiers {', '.join('.' + m for m in found)}")
        if not found:
            return default
        self.left.remove(found[0])
        return found[0]

    def types(self, count: int | None = None) -> list[str]:
        """Consume the type modifiers, in order; `count` insists on how many there are."""
        found = [m for m in self.left if m in _ALU_TYPES]
        if count is not None and len(found) != count:
            raise self.error(f"expected {count} type modifier(s), found {len(found)}")
        for m in found:
            self.left.remove(m)
        return found

    def finish(self) -> None:
        if self.left:
            raise self.error("modifier(s) not supported: " + ", ".join("." + m for m in self.left))

    def error(self, reason: str) -> UserError:
        return unsupported(self.instr, reason)
