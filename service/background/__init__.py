"""Work done outside requests: bot turns and their scheduling, webhooks,
HTTP bots, and the outbound calls they make."""
