package providerhttp_test

import (
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
)

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"RINDA_HUNTER_API_KEY": " k1 ", "RINDA_HUNTER_BASE_URL": "http://127.0.0.1:8080/"}
	cfg, err := providerhttp.ConfigFromEnv("hunter", "https://api.hunter.io", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.APIKey != "k1" || cfg.BaseURL.String() != "http://127.0.0.1:8080" || cfg.Provider != "hunter" {
		t.Fatalf("cfg = %+v", cfg)
	}
	cfg, err = providerhttp.ConfigFromEnv("hunter", "https://api.hunter.io", func(string) string { return "" })
	if err != nil || cfg.BaseURL.String() != "https://api.hunter.io" || cfg.APIKey != "" {
		t.Fatalf("defaults: cfg = %+v, err = %v", cfg, err)
	}
}

func TestParseBaseURLRejects(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"api.hunter.io",
		"ftp://api.hunter.io",
		"https://",
		"https://api.hunter.io/v2",
		"https://api.hunter.io?x=1",
		"https://api.hunter.io#frag",
		"https://user:hunter2pass@api.hunter.io",
		"https://api.hunter.io/?api_key=hunter2pass",
		"https://api.hunter.io/v2/hunter2pass",
		"ftp://api.hunter.io/?api_key=hunter2pass",
		"://bad",
	} {
		_, err := providerhttp.ParseBaseURL("RINDA_HUNTER_BASE_URL", raw)
		if err == nil {
			t.Errorf("ParseBaseURL(%q) succeeded; want an error", raw)
			continue
		}
		if !strings.Contains(err.Error(), "RINDA_HUNTER_BASE_URL") || strings.Contains(err.Error(), "hunter2pass") {
			t.Errorf("ParseBaseURL(%q) = %q; want the variable named and no password", raw, err)
		}
	}
}
