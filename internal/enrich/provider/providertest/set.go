package providertest

import "maps"

// Set is one stand-in per provider, for a tick or a demo that uses them all.
type Set struct {
	Hunter          *Server
	Findymail       *Server
	MillionVerifier *Server
}

// KeyDefault is the API key Set.Env configures for each provider.
const KeyDefault = "providertest-key"

// StartAll starts a stand-in for every provider.
func StartAll() *Set {
	return &Set{Hunter: NewHunter(), Findymail: NewFindymail(), MillionVerifier: NewMillionVerifier()}
}

// Env is the environment pointing every adapter at its stand-in with
// KeyDefault.
func (s *Set) Env() map[string]string {
	env := map[string]string{}
	for _, srv := range s.All() {
		maps.Copy(env, srv.Env(KeyDefault))
	}
	return env
}

// Getenv looks names up in Env; pass it where os.Getenv would go.
func (s *Set) Getenv(name string) string { return s.Env()[name] }

// All lists the servers.
func (s *Set) All() []*Server { return []*Server{s.Hunter, s.Findymail, s.MillionVerifier} }

// Close stops every server.
func (s *Set) Close() {
	for _, srv := range s.All() {
		srv.Close()
	}
}
