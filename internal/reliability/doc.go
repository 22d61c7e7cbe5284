// Package reliability holds the fault and security suite: tests that run
// the rindactl binary as subprocesses against throwaway Postgres, provider
// stand-ins and an in-process SMTP server, then kill it, cut its database,
// feed it hostile answers, and check that nothing is lost, nothing is sent
// twice and no secret leaks. It has no code of its own; see
// docs/reliability.md for what is proved and the measured figures.
package reliability
