package demo

import "time"

// EmailBudget is the --max-duration a round's email tick runs with.
func EmailBudget(c Config) time.Duration {
	email, _, _ := c.withDefaults().budgets()
	return email
}
