"""A runtime across its releases: which releases a case's verdict changed in (bisect), for
``padconf bisect``, a bundle's first-seen and fixed-in lines and the gate's fixed entries."""
