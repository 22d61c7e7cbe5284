// Package benchstore holds the queries only the demo and the benchmarks run
// (seeding scratch schemas, reading their results), typed by sqlc into
// benchdb (sqlc.yaml's second entry). Only cmd/rindabench links it, so
// rindactl's store holds none of them (issue 41; TestRindactlLinksNoTestServers).
package benchstore
