package hunter

import (
	"encoding/json"
	"testing"
)

// The status an answer is classified by: Hunter sometimes says 200 with
// only an error inside, which counts as that error's code.
func TestAnswerStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		http    int
		body    string
		decoded bool
		want    int
	}{
		{"found", 200, `{"data":{"email":"ada@example.com"}}`, true, 200},
		{"miss", 200, `{"data":{"email":null}}`, true, 200},
		{"200 with only an error", 200, `{"errors":[{"id":"too_many_requests","code":429}]}`, true, 429},
		{"200 with data and an error", 200, `{"data":{},"errors":[{"code":429}]}`, true, 200},
		{"200 with an error, undecodable", 200, `{"errors":[{"code":429}]}`, false, 200},
		{"an error status stays", 401, `{"errors":[{"code":403}]}`, true, 401},
		{"empty 200", 200, `{}`, true, 200},
	} {
		var a answer
		if err := json.Unmarshal([]byte(tc.body), &a); err != nil {
			t.Fatal(err)
		}
		if got := a.status(tc.http, tc.decoded); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
}
