"""service.domain: matches, endings, fairness and signing."""
