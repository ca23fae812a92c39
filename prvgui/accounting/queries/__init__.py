"""The questions a user asks of a composition, answered from the numerics.

``accountant`` certifies epsilon(delta) and delta(epsilon) (closed forms first:
``closed_form``); ``certified`` picks the smallest certified upper bound among the accountants;
``comparisons`` runs the older accountants (RDP, GDP, advanced composition); ``curves`` reads
the tradeoff and PLD curves; ``calibrate`` and ``budget`` search a parameter or split a budget;
``bracket`` gives the proven lower bound of a pair that is not tight; ``risk`` and
``risk_calibrate`` turn the tradeoff curve into attack risk. May import: ``numerics``,
``mechanisms``, ``kinds``, ``pairs``, ``core``."""
