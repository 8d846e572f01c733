"""The offline follow-up resolver: one turn's ``Analysis``, the gate's decision, the rule scorer, and the rule
rewriter that composes and guards the result (see docs/ARCHITECTURE.md, "The resolver")."""
