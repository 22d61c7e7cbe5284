package sequence

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"
)

// fieldSet describes the keys a YAML mapping may hold, so an unknown key is
// reported with its full path (yaml's own KnownFields only gives a line).
type fieldSet struct {
	keys  []string
	child map[string]*fieldSet // for mappings or sequences of mappings
}

var (
	mailboxFields = &fieldSet{
		keys:  []string{"address", "name", "smtp_url", "password_env", "daily_cap", "imap_url", "ramp", "gap", "verp", "helo", "tls_ca", "auth"},
		child: map[string]*fieldSet{"ramp": rampFields, "auth": authFields},
	}
	windowFields = &fieldSet{keys: []string{"timezone", "days", "start", "end"}}
	stepFields   = &fieldSet{keys: []string{"delay", "subject", "body"}}

	campaignFields = &fieldSet{
		keys: []string{"workspace", "name", "unsubscribe_url", "follow_ups_first", "bounce_guard", "ramp", "gap", "mailboxes", "window", "steps"},
		child: map[string]*fieldSet{
			"bounce_guard": bounceGuardFields,
			"ramp":         rampFields,
			"mailboxes":    mailboxFields,
			"window":       windowFields,
			"steps":        stepFields,
		},
	}
)

func checkKnownFields(n *yaml.Node, path string, fs *fieldSet) error {
	switch n.Kind {
	case yaml.SequenceNode:
		for i, item := range n.Content {
			if err := checkKnownFields(item, fmt.Sprintf("%s[%d]", path, i), fs); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			keyPath := key
			if path != "" {
				keyPath = path + "." + key
			}
			if !slices.Contains(fs.keys, key) {
				return fmt.Errorf("%s: unknown field (line %d); known fields: %v", keyPath, n.Content[i].Line, fs.keys)
			}
			if child := fs.child[key]; child != nil {
				if err := checkKnownFields(n.Content[i+1], keyPath, child); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
