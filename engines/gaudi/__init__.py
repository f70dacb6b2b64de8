"""Le jeu des dalles d'Antoni Gaudí: the engine (RULES.md §3)."""
