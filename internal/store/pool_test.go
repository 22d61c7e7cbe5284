package store_test

import (
	"testing"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// A tick's pool is bounded by its kind (enrichment small, so a storm keeps
// few backends busy), unless the operator's URL names its own
// pool_max_conns, which wins.
func TestPoolBoundPerTickKind(t *testing.T) {
	t.Parallel()
	const url = "postgres://rinda@db.internal/rinda"
	for _, c := range []struct {
		url  string
		kind tickkind.Kind
		want int32
	}{
		{url, tickkind.Enrich, store.BackgroundMaxConnsDefault},
		{url, tickkind.Email, store.MaxConnsDefault},
		{url + "?pool_max_conns=2", tickkind.Enrich, 2},
		{url + "?pool_max_conns=12", tickkind.Email, 12},
	} {
		cfg, err := store.ParseConfig(store.Config{URL: c.url, MaxConns: store.TickMaxConns(c.kind)})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.MaxConns != c.want {
			t.Errorf("%s tick on %s: pool of %d, want %d", c.kind, c.url, cfg.MaxConns, c.want)
		}
	}
}
