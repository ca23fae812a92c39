"""Privacy loss random variables and the dominating pairs the kinds are built from.

``prv`` is the PRV itself (atoms and a continuous part with its cdf and tail cuts); the other
modules construct pairs that several kinds share: Poisson subsampling's mixtures
(``subsampling``, ``mixture``, ``mixture_laplace``), sampling without replacement
(``without_replacement``), shuffled batches (``shuffle``), the shuffle model's clones
(``clones``), integer lattices (``lattice``), pairs given as a privacy profile
(``profile_pair``), and the pairs' Renyi and Gaussian-DP facts (``rdp``, ``mixture_rdp``,
``gdp``). The method behind each is in docs/method.md. May import: ``core``."""
