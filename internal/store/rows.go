package store

import "fmt"

// convertRows maps the rows sqlc generated for one query (each query has its
// own row type) one for one into the store's own type. err is the query's;
// it comes back wrapped with what. No rows give an empty, non-nil slice, so
// JSON output shows [] rather than null.
func convertRows[R, T any](rows []R, err error, what string, convert func(R) T) ([]T, error) {
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = convert(r)
	}
	return out, nil
}

// ConvertRows is convertRows for the store packages beside this one
// (benchstore).
func ConvertRows[R, T any](rows []R, err error, what string, convert func(R) T) ([]T, error) {
	return convertRows(rows, err, what, convert)
}
