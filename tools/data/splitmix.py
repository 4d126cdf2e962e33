"""The splitmix64 generator the data scripts share (tools/data): BRIEF.md's
splitmix64, a sequence of draws from a seed, and a draw as a uniform in [-1, 1).
Imported by digits.py, tokens.py and masks.py (the folder of the script that
runs is first on sys.path, in the source tree and in Bazel's genrules alike).
"""
MASK = (1 << 64) - 1


def splitmix64(state):
    """One step: the next state and its output."""
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def draws(seed, count):
    """An iterator over the first `count` outputs from `seed`."""
    state, out = seed, []
    for _ in range(count):
        state, z = splitmix64(state)
        out.append(z)
    return iter(out)


def uniform_pm1(z):
    """A draw's top 53 bits as a uniform in [-1, 1)."""
    return (z >> 11) / float(1 << 53) * 2 - 1
