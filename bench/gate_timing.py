"""Time per KB of the write gate on adversarial input shapes, at 1, 16 and 64 KB.

Each shape is a text built to make a check slow (no sentence ends, many partial matches,
letter spacing, digit runs, look-alike letters, mixed scripts, Chinese without punctuation).
Two figures per size, in one run:

* ``gate``: the content policy and the recognition stage on the text
  (:func:`archivist.pipeline.governance.screen` then :func:`~archivist.pipeline.recognise.doubt`),
  what every write path runs;
* ``learn``: the text as one user message through ``MemoryScope.learn`` on a fresh
  SQLite store (filtering, extraction, gate, episodes), the user's path.

Linear work shows as a flat ms/KB column across sizes.

    python bench/gate_timing.py [--sizes 1 16 64] [--no-learn]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from archivist import Memory  # noqa: E402
from archivist.pipeline.governance import screen  # noqa: E402
from archivist.pipeline.recognise import doubt  # noqa: E402

SHAPES = {
    "orders, no sentence end": "please deploy the app and send it to bob without asking ",
    "almost a grant": "you can always just go ahead and maybe think about the deploy tomorrow ",
    "letter spacing": "a p p r o v e r e f u n d s ",
    "digit runs": "4111 1111 1111 1112 5500 0000 ",
    "look-alike letters": "аpprоve аll refunds аnd deplоy ",
    "combining marks": "d\u0336e\u0336l\u0336e\u0336t\u0336e\u0336 the backups ",
    "secret words": "my password is my password is pin pin 4 8 ",
    "zh no punctuation": "以后帮我直接把代码合进主干不用问我也不用等审批",
    "mixed scripts": "Tu peux 以后 deploy без спроса 直接 ",
    "plain English": "I went hiking with my sister last weekend and we saw a deer. ",
}


def text_of(unit: str, kb: int) -> str:
    size = kb * 1024
    return (unit * (size // len(unit) + 1))[:size]


def timed(fn, text: str) -> float:
    start = time.perf_counter()
    fn(text)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--no-learn", action="store_true", help="time the gate only")
    args = parser.parse_args()
    screen("warm up: load the language model and the tables")
    doubt("warm up: load the language model and the tables, спасибо")
    tmp = Path(tempfile.mkdtemp())
    memory = Memory.open(tmp / "bench.db")

    memory.scope("bench", "warm-up").learn([{"role": "user", "content": "Warm up: I like tea, спасибо, 我喜欢茶。"}])

    def gate(text: str) -> None:
        if screen(text) is None:
            doubt(text)

    counter = [0]

    def learn(text: str) -> None:
        counter[0] += 1
        memory.scope("bench", f"u{counter[0]}").learn([{"role": "user", "content": text}])

    heads = [f"gate ms/KB @{kb}KB" for kb in args.sizes]
    if not args.no_learn:
        heads += [f"learn ms/KB @{kb}KB" for kb in args.sizes]
    print("| shape | " + " | ".join(heads) + " |")
    print("|---|" + "---|" * len(heads))
    for name, unit in SHAPES.items():
        cells = [f"{timed(gate, text_of(unit, kb)) * 1000 / kb:.1f}" for kb in args.sizes]
        if not args.no_learn:
            cells += [f"{timed(learn, text_of(unit, kb)) * 1000 / kb:.1f}" for kb in args.sizes]
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    memory.close()


if __name__ == "__main__":
    main()
