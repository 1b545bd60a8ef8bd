"""Mutations of LLVM IR text for the bridge's fuzz tests: each deletes,
duplicates or swaps lines, or splices a token into a line."""

import random


def mutations(text: str, count: int, seed: int, tokens: list[str], max_edits: int = 1):
    """`count` mutated copies of `text`, each with 1 to `max_edits` edits."""
    rng = random.Random(seed)
    lines = text.split("\n")
    for _ in range(count):
        mutated = list(lines)
        for _ in range(rng.randint(1, max_edits)):
            i = rng.randrange(len(mutated))
            kind = rng.randrange(4)
            if kind == 0:
                del mutated[i]
            elif kind == 1:
                mutated.insert(i, mutated[rng.randrange(len(mutated))])
            elif kind == 2:
                j = rng.randrange(len(mutated))
                mutated[i], mutated[j] = mutated[j], mutated[i]
            else:
                at = rng.randrange(len(mutated[i]) + 1)
                mutated[i] = mutated[i][:at] + rng.choice(tokens) + mutated[i][at + rng.randrange(4) :]
        yield "\n".join(mutated)
