"""padconf: conformance test-suite generator and differential tester for the Pad operator."""
import os

# padconf's numpy work is on small arrays, in several processes at once (drawing cases, judging,
# one worker per core): OpenBLAS's own threads would only spin against them. Set before numpy is
# first imported; a value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
