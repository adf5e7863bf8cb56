"""Hashing benchmark: state_hash (RFC 8785 JCS + SHA-256) on typical 1-2 KB persisted snapshots.

Measures entries/s of `state_hash` against a naive `json.dumps(sort_keys=True)` + SHA-256 in the
same run, on the same snapshots (the naive one is NOT JCS-correct: code-point key order, Python
float text; it is only the speed reference). Three kinds of snapshot:

- plain:    agent-like context (strings, ints, bools, non-integral floats): orjson fast path
- integral: the same plus integral floats (50.0) and an int beyond 2**53: exact JCS path
- astral:   the same as plain plus an emoji key (UTF-16 key order): exact JCS path

Also times the strict-JSON check alone (`assert_json_serializable`, run on every append).

    .venv/bin/python benchmarks/hashing.py [--count 5000] [--repeat 5] [--seed 8785]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import orjson

from agent_explorer.canonical.jcs import state_hash
from agent_explorer.canonical.strict import assert_json_serializable

WORDS = ["refund", "order", "damaged", "blue", "vase", "photo", "upload", "customer", "wants", "shipping", "label", "return", "policy", "thanks", "please", "check", "status", "account", "billing", "invoice", "tracking", "delayed", "replacement"]


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def snapshot(rng: random.Random, kind: str) -> dict[str, Any]:
    """A persisted snapshot shaped like an agent's: state value, context with a chat, an order."""
    messages = [
        {"role": rng.choice(["user", "assistant"]), "content": sentence(rng, rng.randint(6, 16))}
        for _ in range(rng.randint(5, 10))
    ]
    price = round(rng.uniform(5, 200), 2) + 0.005  # never integral
    context: dict[str, Any] = {
        "threadId": f"t-{rng.getrandbits(32):08x}",
        "customer": {"id": f"cus_{rng.getrandbits(24)}", "name": "Ada Lovelace", "tier": "gold", "locale": "en-GB"},
        "messages": messages,
        "attempts": rng.randint(0, 5),
        "maxAttempts": 5,
        "approved": rng.random() < 0.5,
        "score": rng.random() + 1e-3,
        "tags": rng.sample(["refund", "damaged", "priority", "vip", "late"], 3),
        "lastError": None,
        "order": {"id": rng.randint(1000, 9999), "items": [{"sku": "VASE-BLU", "qty": 1, "price": price}]},
    }
    if kind == "integral":
        context["order"]["total"] = float(rng.randint(10, 500))  # 50.0: ECMAScript prints "50"
        context["budget"] = {"spent": 0.0, "limit": 100.0, "nonce": 2**60}
    if kind == "astral":
        context["reactions"] = {"\U0001f44d": rng.randint(0, 9), "\ue000private": 1, "ok": 2}
    return {
        "status": "active",
        "value": {"conversation": rng.choice(["drafting", "awaitingApproval", "acting"]), "audit": "idle"},
        "historyValue": {},
        "context": context,
        "children": {"draft": {"snapshot": {"status": "active"}, "src": "draft", "syncSnapshot": False}},
    }


def naive_hash(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def best_rates(fns: dict[str, Callable[[Any], Any]], values: list[Any], repeat: int) -> dict[str, float]:
    """Best-of-`repeat` items/s of each fn over values; the fns take turns within each round, so a
    burst of load from neighbours hits all of them alike and the ratios stay fair."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            for value in values:
                fn(value)
            best[name] = min(best[name], time.perf_counter() - start)
    return {name: len(values) / seconds for name, seconds in best.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=8785)
    args = parser.parse_args()

    print(f"python {sys.version.split()[0]}, orjson {orjson.__version__}; {args.count} snapshots "
          f"per kind, best of {args.repeat}")
    header = f"{'kind':<9} {'bytes':>6} {'state_hash/s':>13} {'naive/s':>10} {'ratio':>6} {'check/s':>10}"
    print(header)
    print("-" * len(header))
    for kind in ("plain", "integral", "astral"):
        rng = random.Random(f"{args.seed}-{kind}")
        values = [snapshot(rng, kind) for _ in range(args.count)]
        size = sum(len(orjson.dumps(v)) for v in values) / len(values)
        rates = best_rates(
            {"ours": state_hash, "naive": naive_hash, "check": assert_json_serializable}, values, args.repeat
        )
        ours, naive, check = rates["ours"], rates["naive"], rates["check"]
        print(f"{kind:<9} {size:>6.0f} {ours:>13,.0f} {naive:>10,.0f} {ours / naive:>5.2f}x {check:>10,.0f}")
    print("ratio = state_hash entries/s over naive json.dumps(sort_keys=True)+sha256 entries/s "
          "(naive is not JCS-correct)")


if __name__ == "__main__":
    main()
