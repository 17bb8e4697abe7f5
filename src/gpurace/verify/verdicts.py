"""A kernel's verdicts: per memory object race-free, race or unknown, and its barriers' divergence.

An object is *race-free* only when the solver proved, for every pair of its
accesses, that no two distinct threads can make them unordered and
overlapping. An alarm is *certain* when FaialAA's theorem applies: both
accesses are reached under exact conditions (control independence, CI), at
exact offsets (data independence, DI), every loop iteration the witness
names was checked reachable, and the kernel has no synchronisation the
verifier does not model (fences, atomics, `__syncwarp`, strong accesses)
that could order the pair, nor an `__assume` the witness may break in
iterations or on values it does not name. Otherwise it is *possible*, with
the approximations that made it so named.

With `benign_same_value` (GPUVerify's convention, as `check
--benign-same-value` has it), two plain stores that provably write the same
bits to the same bytes do not count; an object proved race-free only so
lists those pairs in `ObjectVerdict.benign`, since they are still races
under the PTX memory model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import z3

from gpurace.frontend.kernels import KernelInfo
from gpurace.frontend.ptx.debuginfo import user_frame
from gpurace.frontend.ptx.ir import Function, Instruction, Module, SourceLoc
from gpurace.verify.cfg import UnsupportedControl
from gpurace.verify.explore import DIMS, Access, BarrierSite, Exploration, Explorer, Unsupported
from gpurace.verify.queries import PairSolver
from gpurace.verify.terms import Symbols, free_symbols

UNUSED_WARP_BARRIERS = "not used to order accesses: "
"""How the verdict on warp barriers that order nothing begins; the reason follows."""

ITERATIONS_CHECKED = 4096
"""A witness's loop iterations are checked reachable one by one up to this many; beyond, an alarm stays possible."""


@dataclass
class Witness:
    """A solver model made readable: the two threads, their loop iterations, parameters and the offsets."""

    threads: list[dict]
    parameters: dict[str, int]
    dimensions: dict[str, int]

    def as_dict(self) -> dict:
        return {"threads": self.threads, "parameters": self.parameters, "dimensions": self.dimensions}


@dataclass
class Alarm:
    """A possible race (or barrier divergence) with its witness, labels and status."""

    kind: str
    first: str
    second: str | None
    accesses: tuple[str, str] | None
    witness: Witness
    ci: bool
    di: bool
    approximations: list[str]
    status: str
    cause: str | None = None
    reproduce: str | None = None
    locations: tuple[SourceLoc | None, ...] = ()


@dataclass
class ObjectVerdict:
    name: str
    kind: str
    verdict: str
    alarms: list[Alarm] = field(default_factory=list)
    reason: str | None = None
    benign: list[str] = field(default_factory=list)
    """`write at A / write at B` for each pair of stores the proof took as benign same-value writes."""


WHOLE_OBJECT_RLIMIT = 3_000_000
"""The budget (z3 resource units, about a second of a current core) of the question for all of an object's pairs
at once, before its pairs are asked one by one."""


@dataclass
class KernelVerdict:
    name: str
    objects: list[ObjectVerdict] = field(default_factory=list)
    barriers: str = "no barriers"
    warp_barriers: str = "no warp barriers"
    divergence: list[Alarm] = field(default_factory=list)
    unknown: str | None = None
    unmodelled: list[str] = field(default_factory=list)
    launch: dict[str, int | None] = field(default_factory=dict)
    assumed: list[str] = field(default_factory=list)


def verify_kernel(
    module: Module, fn: Function, info: KernelInfo, dims: dict[str, int | None], rlimit: int, *, wall_ms: int | None = None, benign_same_value: bool = False,
    within_block: bool = False, deadline: float | None = None,
) -> KernelVerdict:
    """Explore `fn` and answer every race and divergence question about it (`benign_same_value`: see the module;
    `within_block`: pairs of threads of one block only; `deadline`: see `PairSolver`)."""
    verdict = KernelVerdict(info.name, launch=dict(dims))
    sym = Symbols()
    try:
        out = Explorer(module, fn, info, dims, sym).run()
    except (Unsupported, UnsupportedControl) as error:
        verdict.unknown = str(error)
        return verdict
    solver = PairSolver(out, sym, dims, rlimit, wall_ms=wall_ms, within_block=within_block, deadline=deadline)
    judge = _Judge(out, sym, solver, benign_same_value)
    verdict.divergence, verdict.barriers = judge.barriers()
    warp_mask, verdict.warp_barriers = judge.warp_barriers()
    if out.warp_barriers and warp_mask is None:
        out.unmodelled.add(f"__syncwarp ({verdict.warp_barriers.removeprefix(UNUSED_WARP_BARRIERS)})")
    verdict.unmodelled = sorted(out.unmodelled)
    verdict.assumed = list(out.assumed.values())
    for name, obj in sorted(out.objects.items(), key=lambda kv: kv[1].label):
        diverging = bool(verdict.divergence) or verdict.barriers == "unknown"
        verdict.objects.append(judge.object(name, obj.kind, obj.label, diverging=diverging, warp_mask=warp_mask))
    if out.unknown_pointers:  # whatever those accesses reach is undecided, even objects no other access names
        first = out.unknown_pointers[0]
        verdict.objects.append(
            ObjectVerdict(
                "memory reached through untraced pointers", "global", "unknown",
                reason=f"{len(out.unknown_pointers)} access(es), the first at {first.where()}, go through pointers verify cannot trace to one object",
            )
        )
    return verdict


class _Judge:
    def __init__(self, out: Exploration, sym: Symbols, solver: PairSolver, same_value: bool):
        self.out, self.sym, self.solver, self.same_value = out, sym, solver, same_value
        self.cache: dict[int, frozenset[str]] = {}
        self.loose = self._loose_assumptions()

    def _loose_assumptions(self) -> list[str]:
        """The `__assume`s a witness may satisfy only in part, which keep its alarms possible.

        The queries assume each one in the loop iterations they pick and on
        the values they choose; inside a loop, or on approximated values, a
        witness's run may still break it elsewhere.
        """
        out = []
        for index, where, in_loop in self.out.user_assumptions:
            term = self.out.assumptions[index]
            if in_loop or self._loops_in(term):
                out.append(f"the __assume at {where}, in a loop: assumed in the witness's iterations only")
            elif self._approximated(term):
                out.append(f"the __assume at {where}, on approximated values")
        return out

    def object(self, name: str, kind: str, label: str, *, diverging: bool, warp_mask: int | None) -> ObjectVerdict:
        accesses = [a for a in self.out.accesses if a.obj == name]
        space = "shared" if kind == "shared" else "global"
        blind = [i for i in self.out.unknown_pointers if (i.space or "generic") in (space, "generic")]
        pairs = [(a, b) for i, a in enumerate(accesses) for b in accesses[i:]]
        alarms: list[Alarm] = []
        undecided: list[str] = []
        for barriers in (True, False) if diverging else (True,):
            alarms, undecided = self._pairs(pairs, barriers, warp_mask)
            if alarms or undecided:
                break
        if alarms:
            return ObjectVerdict(label, kind, "race", alarms)
        if undecided:
            return ObjectVerdict(label, kind, "unknown", reason=undecided[0])
        if blind:
            where = blind[0].where()
            return ObjectVerdict(label, kind, "unknown", reason=f"an access at {where} goes through a pointer verify cannot trace to one object")
        return ObjectVerdict(label, kind, "race-free", benign=self._benign(pairs, barriers, warp_mask) if self.same_value else [])

    def _benign(self, pairs: list[tuple[Access, Access]], barriers: bool, warp_mask: int | None) -> list[str]:
        """The pairs of stores that conflict only where they write the same value: what the proof excused.

        A pair the solver cannot decide without the exemption is listed
        too: the proof may have needed it.
        """
        out: list[str] = []
        for a, b in pairs:
            if self.solver.benign_writes(a, b) is None:
                continue
            q = self.solver.conflict(a, b, barriers=barriers, warp_mask=warp_mask)
            text = f"write at {a.ins.where()} / write at {b.ins.where()}"
            if q is not None and text not in out and self.solver.solve(q, obj=a.obj).status != "unsat":
                out.append(text)
        return out

    def _pairs(self, pairs: list[tuple[Access, Access]], barriers: bool, warp_mask: int | None) -> tuple[list[Alarm], list[str]]:
        questions = [
            (a, b, q)
            for a, b in pairs
            if (q := self.solver.conflict(a, b, barriers=barriers, warp_mask=warp_mask, same_value=self.same_value)) is not None
        ]
        if not questions:
            return [], []
        # one question for the whole object first; when it is slow, the pairs' questions (each often far easier)
        # decide it: the object is race-free exactly when every pair's is unsat
        obj = questions[0][0].obj
        whole = self.solver.solve(z3.Or(*[q for _, _, q in questions]), rlimit=WHOLE_OBJECT_RLIMIT if len(questions) > 1 else None, obj=obj)
        if whole.status == "unsat":
            return [], []
        alarms, undecided, seen = [], [], set()
        for a, b, q in questions:
            key = tuple(sorted(((a.ins.where(), _kind(a)), (b.ins.where(), _kind(b)))))  # one alarm per unordered pair
            if key in seen:
                continue
            outcome = self.solver.solve_small(q, obj=obj)
            if outcome.status == "sat":
                seen.add(key)
                alarms.append(self._race(a, b, outcome.model, barriers))
            elif outcome.status == "unknown":
                undecided.append(f"{outcome.reason} on {a.ins.where()} against {b.ins.where()}")
                break  # the object cannot be proved now; more spent budgets would only cost time
        return alarms, undecided

    def barriers(self) -> tuple[list[Alarm], str]:
        """Divergence alarms of block barriers (two threads of a block) and grid barriers (any two threads)."""
        if not self.out.barriers and not self.out.grid_barriers:
            return [], "no barriers"
        alarms = []
        unknown = False
        sites = [(s, self.solver.divergence) for s in self.out.barriers] + [(s, self.solver.grid_divergence) for s in self.out.grid_barriers]
        for site, question in sites:
            exits = [h for h in self._loops_in(site.cond) if h not in site.loops and self.out.loops[h].monotone]
            outcome = self.solver.solve_small(question(site, exits), quantified=bool(exits))
            if outcome.status == "sat":
                alarms.append(self._divergence(site, outcome.model))
            elif outcome.status == "unknown":
                unknown = True
        if alarms:
            return alarms, "divergence possible"
        return [], "unknown" if unknown else "proved uniform"

    def warp_barriers(self) -> tuple[int | None, str]:
        """The lanes whose counts of warp barriers passed order their accesses (None: no lanes), and the verdict.

        Counts order two lanes of a warp when both are in every warp
        barrier's mask and every lane of each mask passes each barrier
        together (the same barrier, in the same loop iterations, after as
        many warp barriers): then the k-th warp barrier of one is the k-th of
        the other. That needs masks known exactly (constants); a mask that
        is not, or a barrier a lane of its mask may miss (one that exits
        first, say), leaves warp barriers ordering nothing.
        """
        sites = self.out.warp_barriers
        if not sites:
            return None, "no warp barriers"
        if not all(z3.is_bv_value(s.mask) for s in sites):
            where = next(s.ins.where() for s in sites if not z3.is_bv_value(s.mask))
            return None, f"{UNUSED_WARP_BARRIERS}the mask at {where} is not a constant"
        common = 0xFFFFFFFF
        for site in sites:
            mask = site.mask.as_long()
            common &= mask
            exits = [h for h in self._loops_in(site.cond) if h not in site.loops and self.out.loops[h].monotone]
            outcome = self.solver.solve(self.solver.warp_divergence(site, exits, mask), quantified=bool(exits))
            if outcome.status != "unsat":
                why = "may be missed by a lane of its mask" if outcome.status == "sat" else f"could not be proved uniform ({outcome.reason})"
                return None, f"{UNUSED_WARP_BARRIERS}the warp barrier at {site.ins.where()} {why}"
        return common, f"proved uniform in their masks (lanes {common:#010x} ordered by them)"

    # ------------------------------------------------------------- alarms

    def _names(self, *terms) -> set[str]:
        """The free symbols of the terms, by name."""
        return set().union(*(free_symbols(t, self.cache) for t in terms))

    def _approximated(self, *terms) -> list[str]:
        names = self._names(*terms)
        reasons = {self.sym.table[n].reason for n in names if n in self.sym.table and self.sym.table[n].reason}
        return sorted(reasons)

    def _race(self, a: Access, b: Access, model: z3.ModelRef, barriers: bool) -> Alarm:
        control = self._approximated(a.cond, b.cond, a.barriers, b.barriers, a.warp_barriers, b.warp_barriers, a.grid_barriers, b.grid_barriers)
        data = self._approximated(a.offset, b.offset)
        # taking same-value stores as benign, a race between two stores rests on their values being known too
        values = self._approximated(a.stored, b.stored) if self.same_value and self.solver.benign_writes(a, b) is not None else []
        loops = self._loops_in(a.cond, a.offset), self._loops_in(b.cond, b.offset)
        if values:
            loops = self._loops_in(a.cond, a.offset, a.stored), self._loops_in(b.cond, b.offset, b.stored)
        iterations = self._iterations_reachable(model, ((loops[0], 1), (loops[1], 2)))
        certain = not control and not data and not values and not self.out.unmodelled and barriers and iterations and not self.loose
        witness = self._witness(model, [(a, 1), (b, 2)])
        kinds = (_kind(a), _kind(b))
        return Alarm(
            "data-race", a.ins.where(), b.ins.where(), kinds, witness, ci=not control, di=not data,
            approximations=sorted(set(control + data + values)) + ([] if iterations else ["loop iterations beyond those checked"]) + self.loose,
            status="certain" if certain else "possible", cause=_cause(a, b), locations=(_user_loc(a.ins), _user_loc(b.ins)),
        )

    def _divergence(self, site: BarrierSite, model: z3.ModelRef) -> Alarm:
        """A divergence alarm; certain only when the second thread's missing the barrier is exact too.

        That needs every loop the barrier comes after to be `monotone` (its
        exit iteration is the one the solver quantified over).
        """
        control = self._approximated(site.cond)
        loops = self._loops_in(site.cond)
        iterations = self._iterations_reachable(model, ((loops, 1),))
        exits_exact = all(self.out.loops[h].monotone for h in loops if h not in site.loops)
        certain = not control and iterations and exits_exact and not self.loose
        witness = self._witness(model, [(site, 1), (site, 2)])
        return Alarm(
            "barrier-divergence", site.ins.where(), None, None, witness, ci=not control, di=True,
            approximations=control + self.loose, status="certain" if certain else "possible", locations=(_user_loc(site.ins),),
        )

    def _loops_in(self, *terms) -> list[int]:
        """The loops whose counters the terms name: those around the access, and those it comes after."""
        names = self._names(*terms)
        return [h for h, facts in self.out.loops.items() if str(facts.counter) in names]

    def _iterations_reachable(self, model: z3.ModelRef, where) -> bool:
        """Every iteration before the witness's, of every loop the accesses depend on, takes the back-edge.

        A loop that ends before the access counts too: the condition to leave
        it in iteration k is exact only if iterations 0..k-1 went round.
        """
        for loops, thread in where:
            for header in loops:
                facts = self.out.loops[header]
                if not facts.exact:
                    return False
                counter = self.solver.rename(facts.counter, thread)
                k = model.eval(counter, model_completion=True).as_long()
                if k > ITERATIONS_CHECKED:
                    return False
                edge = self.solver.rename(facts.backedge, thread)
                for j in range(k):
                    step = z3.substitute(edge, (counter, z3.BitVecVal(j, 64)))
                    if not z3.is_true(model.eval(step, model_completion=True)):
                        return False
        return True

    def _witness(self, model: z3.ModelRef, sites) -> Witness:
        def value(term) -> int:
            return model.eval(term, model_completion=True).as_long()

        threads = []
        for site, t in sites:
            entry = {
                "thread": [value(self.solver.index(f"tid.{d}", t)) for d in DIMS],
                "block": [value(self.solver.index(f"ctaid.{d}", t)) for d in DIMS],
                "line": site.ins.where(),
                "iterations": {self.out.loops[h].where: value(self.solver.rename(self.out.loops[h].counter, t)) for h in site.loops},
            }
            if isinstance(site, Access):
                entry["offset"] = _signed(value(self.solver.rename(site.offset, t)), 64)
            threads.append(entry)
        params = {
            name.removeprefix("param."): value(s.term)
            for name, s in self.sym.table.items()
            if s.kind == "uniform" and name.startswith("param.")
        }
        dims = {name: value(self.solver.dim(name)) for name in (f"{n}.{d}" for n in ("nctaid", "ntid") for d in DIMS) if self.solver.dims.get(name) is None}
        return Witness(threads, params, dims)


def _user_loc(ins: Instruction) -> SourceLoc | None:
    """The user's source position of an instruction (the frame reports name, as `Instruction.where` does)."""
    return user_frame(ins.loc) if ins.loc is not None else None


def _signed(v: int, width: int) -> int:
    return v - (1 << width) if v >> (width - 1) else v


def _kind(a: Access) -> str:
    if a.atomic and a.read and a.write:
        return "atomic"
    return "write" if a.write else "read"


def _cause(a: Access, b: Access) -> str:
    if a.atomic and b.atomic:
        return "insufficient scope: a block-scoped atomic does not order accesses from another block"
    if a.atomic or b.atomic:
        return "an atomic and a plain access are not ordered"
    if a.volatile or b.volatile:
        return "volatile is not atomic: unordered volatile accesses race"
    return "no synchronisation between the two accesses"
