"""Seeded random statecharts as plain JSON, with event sequences, for the differential fuzz cases.

Job: generate machine configs that are pure JSON (implementations referenced by name only) and
the events to fold through them, and build them with the named implementations below, twins of
tests/node/xstate/generated.mjs. Both sides load the very same JSON, so a difference can only be
the engine's. It never computes an expectation: XState runs the same JSON in the same session.

Termination is by construction (XState has no guard against endless eventless loops): `n` only
grows; an `always` transition needs `n < max` and adds 1 (several may fire in one microstep, in
parallel regions); `PING` is raised only by handlers of the external events A and B; onDone
transitions target only atomic (never final) states and never change `n`.
"""

from __future__ import annotations

import random
from typing import Any

from agent_explorer.engine import (
    and_,
    assign,
    cancel,
    emit,
    from_promise,
    log,
    not_,
    or_,
    raise_,
    send_to,
    setup,
    spawn_child,
    state_in,
    stop_child,
)

MACHINE_ID = "gen"
EXTERNAL = ["A", "B", "C", "D"]
DESCRIPTORS = [*EXTERNAL, "PING", "*", "x.*", "x.a"]  # keys of `on`
EXTRA_EVENTS = ["x", "x.a", "x.b.c"]  # matched only by the wildcard descriptors


async def _task(input: Any) -> Any:
    return input


def build_machine(config: dict[str, Any]) -> Any:
    """The Python twin of generated.mjs `buildMachine`: same names, same behaviour."""
    return setup(
        guards={
            "isEven": lambda c, e, p: c["n"] % 2 == 0,
            "isOdd": lambda c, e, p: c["n"] % 2 == 1,
            "below": lambda c, e, p: c["n"] < p["max"],
            "inS0": state_in("#gen.s0"),
            "inR0": state_in("#gen.r0"),
            "evenOrSmall": or_(["isEven", {"type": "below", "params": {"max": 3}}]),
            "notEven": not_("isEven"),
            "oddAndSmall": and_(["isOdd", {"type": "below", "params": {"max": 6}}]),
        },
        actions={
            "inc": assign({"n": lambda c, e, p: c["n"] + 1}),
            "add": assign({"n": lambda c, e, p: c["n"] + p["by"]}),
            "track": assign({"trail": lambda c, e, p: [*c["trail"], e["type"]][-8:]}),
            "notify": lambda c, e, p: None,
            "raisePing": raise_({"type": "PING"}),
            "delayPing": raise_({"type": "PING"}, delay=50, id="dp"),
            "cancelPing": cancel("dp"),
            "spawnHelper": spawn_child(
                "task", id="helper", input=lambda c, e, p: {"n": c["n"]}
            ),
            "stopHelper": stop_child("helper"),
            "pokeHelper": send_to("helper", {"type": "POKE"}),
            "pokeLater": send_to(
                "helper",
                lambda c, e, p: {"type": "LATER", "n": c["n"]},
                delay="short",
                id="pl",
            ),
            "emitN": emit(lambda c, e, p: {"type": "n", "n": c["n"], "on": e["type"]}),
            "logN": log(lambda c, e, p: c["n"], "n"),
        },
        actors={"task": from_promise(_task)},
        delays={"short": 10},
    ).create_machine(config)


class _Generator:
    """One random machine: a skeleton first (so every id exists), then transitions and events."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.nodes: list[dict[str, Any]] = []  # {"id", "kind", "config", "parent_kind"}
        self.invokes: list[str] = []
        self.timers: list[str] = []

    # -- skeleton ----------------------------------------------------------------------------

    def skeleton(self) -> dict[str, Any]:
        root_kind = "parallel" if self.rng.random() < 0.2 else "compound"
        self.in_first = "inR0" if root_kind == "parallel" else "inS0"
        root: dict[str, Any] = {"id": MACHINE_ID}
        self._fill(root, MACHINE_ID, root_kind, depth=0)
        return root

    def _fill(
        self, config: dict[str, Any], node_id: str, kind: str, depth: int
    ) -> None:
        rng = self.rng
        if kind == "parallel":
            config["type"] = "parallel"
            config["states"] = {}
            for i in range(rng.randint(2, 3)):
                key = f"r{i}"
                child: dict[str, Any] = {}
                config["states"][key] = child
                self._add(child, f"{node_id}.{key}", "compound", depth + 1, "parallel")
            return
        # compound
        config["states"] = {}
        count = rng.randint(2, 3)
        for i in range(count):
            key = f"s{i}"
            child = {}
            config["states"][key] = child
            if i == 0 or depth >= 3:
                child_kind = (
                    "atomic" if depth >= 3 or rng.random() < 0.6 else "compound"
                )
            else:
                child_kind = rng.choices(
                    ["atomic", "compound", "parallel", "final"],
                    weights=[45, 20, 15, 20],
                )[0]
            self._add(child, f"{node_id}.{key}", child_kind, depth + 1, "compound")
        config["initial"] = "s0"
        if rng.random() < 0.3:
            history: dict[str, Any] = {"type": "history"}
            if rng.random() < 0.5:
                history["history"] = "deep"
            if rng.random() < 0.4:
                history["target"] = f"s{rng.randrange(count)}"
            config["states"]["h"] = history
            self.nodes.append(
                {"id": f"{node_id}.h", "kind": "history", "config": history}
            )

    def _add(
        self, config: dict[str, Any], node_id: str, kind: str, depth: int, parent: str
    ) -> None:
        self.nodes.append(
            {"id": node_id, "kind": kind, "config": config, "parent_kind": parent}
        )
        if kind == "final":
            config["type"] = "final"
        elif kind in ("compound", "parallel"):
            self._fill(config, node_id, kind, depth)

    # -- decoration --------------------------------------------------------------------------

    def _target(self, atomic_only: bool = False, source: str | None = None) -> Any:
        """A target: mostly `#id`; sometimes a sibling name, a `.child`, or several `#id`s into
        different regions of one parallel state (never for onDone: see the module docstring)."""
        rng = self.rng
        if not atomic_only and source is not None and rng.random() < 0.3:
            form = rng.choice(["sibling", "child", "multi"])
            parent, _, _ = source.rpartition(".")
            siblings = [
                n["id"] for n in self.nodes if n["id"].rpartition(".")[0] == parent
            ]
            children = [
                n["id"] for n in self.nodes if n["id"].rpartition(".")[0] == source
            ]
            if form == "sibling" and parent and len(siblings) > 1:
                return rng.choice([i for i in siblings if i != source]).rpartition(".")[
                    2
                ]
            if form == "child" and children:
                return "." + rng.choice(children).rpartition(".")[2]
            if form == "multi":
                targets = self._multi_target()
                if targets:
                    return targets
        candidates = [
            n["id"] for n in self.nodes if not atomic_only or n["kind"] == "atomic"
        ]
        return "#" + rng.choice(candidates)

    def _multi_target(self) -> list[str] | None:
        """`#id`s inside two different regions of one parallel state, if there is one."""
        parallels = [n["id"] for n in self.nodes if n["kind"] == "parallel"]
        if not parallels:
            return None
        rng = self.rng
        par = rng.choice(parallels)
        regions = [n["id"] for n in self.nodes if n["id"].rpartition(".")[0] == par]
        picked = rng.sample(regions, 2)
        targets = []
        for region in picked:
            inside = [
                n["id"]
                for n in self.nodes
                if n["id"].startswith(region + ".") and n["kind"] != "history"
            ]
            targets.append("#" + rng.choice(inside or [region]))
        return targets

    def _guard(self) -> Any:
        rng = self.rng
        return rng.choice(
            [
                "isEven",
                "isOdd",
                {"type": "below", "params": {"max": rng.randint(1, 6)}},
                "evenOrSmall",
                "notEven",
                "oddAndSmall",
                self.in_first,
            ]
        )

    def _transition(self, event_type: str, source: str | None = None) -> dict[str, Any]:
        rng = self.rng
        t: dict[str, Any] = {}
        if rng.random() < 0.75:
            # A done.state event is internal: an onDone into a final state (or a history that
            # may restore one) could raise it again forever, so onDone only targets atomic states.
            t["target"] = self._target(
                atomic_only=event_type == "onDone", source=source
            )
            if rng.random() < 0.25:
                t["reenter"] = True
        if rng.random() < 0.4:
            t["guard"] = self._guard()
        actions: list[Any] = []
        if event_type != "onDone" and rng.random() < 0.5:
            actions.append(
                "inc"
                if rng.random() < 0.6
                else {"type": "add", "params": {"by": rng.randint(1, 3)}}
            )
        if rng.random() < 0.5:
            actions.append("track")
        if rng.random() < 0.3:
            actions.append({"type": "notify", "params": {"on": event_type}})
        if event_type in ("A", "B") and rng.random() < 0.3:
            actions.append("raisePing")
        if rng.random() < 0.15:
            actions.append(rng.choice(["delayPing", "cancelPing"]))
        if rng.random() < 0.1:
            actions.append(
                rng.choice(["spawnHelper", "stopHelper", "pokeHelper", "pokeLater"])
            )
        if rng.random() < 0.15:
            actions.append(rng.choice(["emitN", "logN"]))
        if (
            event_type == "*"
        ):  # `*` also sees done.state events: a target could loop forever
            t.pop("target", None)
            t.pop("reenter", None)
        if actions:
            t["actions"] = actions
        return t

    def decorate(self, root: dict[str, Any]) -> None:
        rng = self.rng
        root_node = {"id": MACHINE_ID, "kind": "root", "config": root}
        for node in [root_node, *self.nodes]:
            config, kind = node["config"], node["kind"]
            if kind == "final" and rng.random() < 0.3:
                config["output"] = {"leaf": node["id"]}
            if kind in ("history", "final"):
                continue
            on: dict[str, Any] = {}
            for event_type in rng.sample(DESCRIPTORS, rng.randint(0, 3)):
                candidates = [
                    self._transition(event_type, node["id"])
                    for _ in range(rng.choice([1, 1, 2]))
                ]
                on[event_type] = candidates[0] if len(candidates) == 1 else candidates
            if on:
                config["on"] = on
            if kind == "root":
                if rng.random() < 0.3:
                    config["output"] = {"fixed": rng.randint(0, 9)}
                continue
            if rng.random() < 0.12:
                always: dict[str, Any] = {
                    "guard": {"type": "below", "params": {"max": rng.randint(1, 8)}},
                    "actions": ["inc", "track"],
                }
                if rng.random() < 0.5:
                    always["target"] = self._target()
                config["always"] = always
            if rng.random() < 0.12:
                delay = rng.choice(["100", "short"])
                self.timers.append(f"xstate.after.{delay}.{node['id']}")
                t = self._transition("after", node["id"])
                t.pop("reenter", None)
                config["after"] = {delay: t}
            if rng.random() < 0.12:
                invokes = [
                    self._invoke(node["id"], i) for i in range(rng.choice([1, 1, 2]))
                ]
                config["invoke"] = invokes[0] if len(invokes) == 1 else invokes
            if rng.random() < 0.2:
                config["entry"] = rng.choice(
                    [
                        "track",
                        ["notify", "track"],
                        {"type": "notify", "params": {"in": node["id"]}},
                        ["spawnHelper", "track"],
                        "delayPing",
                    ]
                )
            if rng.random() < 0.2:
                config["exit"] = rng.choice(["track", "notify", "cancelPing"])
            if rng.random() < 0.15:
                config["tags"] = rng.sample(["busy", "blue", "x"], rng.randint(1, 2))
            if kind in ("compound", "parallel") and rng.random() < 0.5:
                config["onDone"] = self._transition("onDone")

    def _invoke(self, state_id: str, index: int) -> dict[str, Any]:
        """An invoke of `task`; without an `id` a quarter of the time, when XState names the
        child `<index>.<state id>` (completions are sent to that name)."""
        rng = self.rng
        invoke: dict[str, Any] = {"src": "task", "input": {"k": len(self.invokes)}}
        if rng.random() < 0.25:
            self.invokes.append(f"{index}.{state_id}")
        else:
            invoke["id"] = f"job{len(self.invokes)}"
            self.invokes.append(invoke["id"])
        invoke["onDone"] = (
            self._transition("done", state_id)
            if rng.random() < 0.7
            else {"actions": "track"}
        )
        if rng.random() < 0.5:
            invoke["onError"] = (
                {"actions": "track"}
                if rng.random() < 0.5
                else self._transition("error", state_id)
            )
        return invoke

    def events(self, count: int) -> list[dict[str, Any]]:
        rng = self.rng
        out: list[dict[str, Any]] = []
        for _ in range(count):
            r = rng.random()
            if r < 0.12 and self.timers:
                out.append({"type": rng.choice(self.timers)})
            elif r < 0.24 and self.invokes:
                out.append(
                    {
                        "type": f"xstate.done.actor.{rng.choice(self.invokes)}",
                        "output": {"v": rng.randint(0, 9)},
                    }
                )
            elif r < 0.26 and self.invokes:
                out.append(
                    {
                        "type": f"xstate.error.actor.{rng.choice(self.invokes)}",
                        "error": "boom",
                    }
                )
            elif r < 0.31:
                out.append({"type": "Z"})
            elif r < 0.38:
                out.append({"type": rng.choice(EXTRA_EVENTS)})
            else:
                out.append({"type": rng.choice([*EXTERNAL, "PING"])})
        return out


def generate_case(seed: int, index: int, events: int = 25) -> dict[str, Any]:
    """One case: {name, config, input, events, can, matches}; the same (seed, index) -> the same case."""
    rng = random.Random(f"{seed}:{index}")
    gen = _Generator(rng)
    config = gen.skeleton()
    gen.decorate(config)
    # Colliding and dotted explicit ids on a third of the cases, drawn from a second stream so
    # that the rest of every case stays what this seed always gave.
    id_rng = random.Random(f"{seed}:{index}:ids")
    if id_rng.random() < 0.35:
        _collide_ids(config, gen.nodes, id_rng)
    config["context"] = {"n": 0, "trail": []}
    leaf_values = [
        n["id"].split(".")[1]
        for n in gen.nodes
        if n["id"].count(".") == 1 and n["kind"] != "history"
    ]
    return {
        "name": f"g{seed}-{index:03d}",
        "config": config,
        "input": None,
        "events": gen.events(events),
        "can": [{"type": t} for t in [*EXTERNAL, "PING", "x.a"]],
        "matches": sorted(set(leaf_values))[:3],
    }


ID_POOL = ["dup", "dup", "k.q", "k"]


def _collide_ids(root: dict[str, Any], nodes: list[dict[str, Any]], rng: random.Random) -> None:
    """Give a few states explicit ids that collide (with each other or with another state's default
    id) or contain a dot, then rewrite some `#gen.<path>` targets to go through an id their state
    (or an ancestor) now owns, as `#<id>` or `#<id>.<rest of the path>` (dots in the id escaped).

    Every rewritten target still names the same state, so the termination argument of the module
    docstring holds; what changes is the id map (the later state takes a shared id), the node
    orders after a collision (XState's `order` is the id map's size) and `xstate.done.state.<id>`
    names, all of which both sides must derive alike. States with `after` or `invoke` keep their
    ids (the case's events name their timers and children by them).
    """
    eligible = [n for n in nodes if "after" not in n["config"] and "invoke" not in n["config"]]
    if not eligible:
        return
    for node in rng.sample(eligible, min(len(eligible), rng.randint(1, 3))):
        if rng.random() < 0.3:
            node["config"]["id"] = rng.choice(nodes)["id"]  # another state's default id
        else:
            node["config"]["id"] = rng.choice(ID_POOL)
    owner: dict[str, str] = {MACHINE_ID: MACHINE_ID}  # id -> default id of the state that keeps it
    for node in nodes:  # document order: a later state takes the id
        owner[node["config"].get("id", node["id"])] = node["id"]
    explicit = {
        node["id"]: node["config"]["id"]
        for node in nodes
        if "id" in node["config"] and owner[node["config"]["id"]] == node["id"]
    }

    def rewrite(target: str) -> str:
        if not target.startswith(f"#{MACHINE_ID}.") or rng.random() < 0.4:
            return target
        path = target[1:].split(".")
        for cut in range(len(path), 1, -1):
            own = explicit.get(".".join(path[:cut]))
            if own is not None:
                return "#" + ".".join([own.replace(".", "\\."), *path[cut:]])
        return target

    def walk(value: Any) -> None:
        if isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            target = value.get("target")
            if isinstance(target, str):
                value["target"] = rewrite(target)
            elif isinstance(target, list):
                value["target"] = [rewrite(t) if isinstance(t, str) else t for t in target]
            for key, item in value.items():
                if key != "target":
                    walk(item)

    walk(root)
