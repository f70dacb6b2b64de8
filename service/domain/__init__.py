"""What a match is and does: matches (create, join, play), lifecycle,
views, clocks, lobby rules, fairness, endings, the outside calls a match
holds (hooks), and who may see and do what (access). Every write goes
through commits (one compare-and-set helper, then its subscribers); what
the domain needs from the store is stated in ports. Imports neither Flask
nor Redis."""
