// Package schema embeds the versioned migrations so the binary carries its
// own schema: `rindactl migrate` needs no files on disk.
package schema

import "embed"

// Migrations holds migrations/NNNNN_name.sql in goose format.
//
//go:embed migrations/*.sql
var Migrations embed.FS

// Roles creates the least-privilege role ticks run as (rindactl_tick).
//
//go:embed roles.sql
var Roles string
