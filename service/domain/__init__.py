"""What a match is and does: views, lifecycle, lobby rules, fairness,
endings, and who may see and do what. Imports neither Flask nor Redis."""
