package enrich

import "strconv"

// Account names the provider account a call is made on, as the token
// bucket, the credits and the in-tick memory of a refused key key it: the
// provider's name for the host's key ("hunter"), and the provider and
// workspace for a workspace's own key ("hunter/ws/12"), which has its own
// bucket and credits.
func Account(provider string, workspaceID int64, own bool) string {
	if !own {
		return provider
	}
	return provider + "/ws/" + strconv.FormatInt(workspaceID, 10)
}

// finderFor is the adapter lead calls finder name through: the
// workspace's own, else the host's; false when neither can be used.
func (r *tickRun) finderFor(workspaceID int64, name string) (f Finder, own, ok bool) {
	if f := r.cfg.OwnFinders[workspaceID][name]; f != nil {
		return f, true, true
	}
	f = r.hostFinders[name]
	return f, false, f != nil
}

// verifierFor is the workspace's own verifier, else the host's; err is set
// when the host has no key for it and the workspace none of its own.
func (r *tickRun) verifierFor(workspaceID int64) (v Verifier, own bool, err *ProviderError) {
	if v := r.cfg.OwnVerifiers[workspaceID]; v != nil {
		return v, true, nil
	}
	return r.cfg.Verifier, false, r.hostVerifierErr
}
