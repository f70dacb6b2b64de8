"""service.background: bot turns, their scheduling, webhooks and HTTP bots."""
