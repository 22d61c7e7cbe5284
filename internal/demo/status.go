package demo

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store/benchstore"
)

// StatusEveryDefault is how often the live status line refreshes.
const StatusEveryDefault = 250 * time.Millisecond

// liveStatus redraws one terminal line with the database's view of the
// run until ctx ends, then clears it.
func liveStatus(ctx context.Context, w io.Writer, pool *pgxpool.Pool, s *standIns, round func() int, total int) {
	t := time.NewTicker(StatusEveryDefault)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprint(w, "\r\033[K")
			return
		case <-t.C:
		}
		n, err := benchstore.DemoLiveStatus(ctx, pool)
		if err != nil {
			continue // the next refresh will tell; the run itself reports errors
		}
		findymail := "ok"
		if _, out := s.findymail.quota(time.Time{}); out {
			findymail = "OUT OF CREDITS"
		}
		fmt.Fprintf(w, "\r\033[Kround %d/%d  emails sent %d  leads enriched %d, queued %d, unreachable %d  findymail %s",
			round(), total, n.Sent, n.Enriched, n.Pending, n.Unreachable, findymail)
	}
}
