package main

import (
	"context"
	"fmt"
	"time"

	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/store"
)

// checkMailboxLogins logs in to every active mailbox (paused ones too:
// the tick tries them again once the pause ends) with the units'
// environment, and adds each failed login to rep as a problem. An
// unreachable database was reported by checkDatabase already.
func checkMailboxLogins(ctx context.Context, now time.Time, url string, lookup func(string) (string, bool), rep *doctorReport) {
	pool, err := store.Open(ctx, store.Config{URL: url})
	if err != nil {
		return
	}
	defer pool.Close()
	found, err := store.OpsMailboxes(ctx, pool, now, sequence.BounceWindow, store.OpsScope{})
	if err != nil {
		rep.problem(exitError, "mailboxes: "+err.Error())
		return
	}
	var ids []int64
	for _, m := range found {
		if m.Status == "active" {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		rep.Notes = append(rep.Notes, "mailboxes: no active mailbox to log in to")
		return
	}
	mbs, err := storedMailboxes(ctx, pool, ids)
	if err != nil {
		rep.problem(exitError, "mailboxes: "+err.Error())
		return
	}
	for _, mb := range mbs {
		for _, r := range loginMailbox(ctx, pool, lookup, mb) {
			if r.err == nil {
				rep.Checks = append(rep.Checks, fmt.Sprintf("mailbox %s: %s login to %s ok", mb.Address, r.protocol, r.server))
				continue
			}
			rep.problem(exitError, fmt.Sprintf("mailbox %s: %s login to %s failed at %s: %v; see 'rindactl mailbox test %s'",
				mb.Address, r.protocol, r.server, r.err.Stage, r.err.Err, mb.Address))
		}
	}
}
