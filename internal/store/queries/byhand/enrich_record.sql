-- Records a group of outcomes of tick @tick_id in one statement over arrays (one
-- element per lead). Only rows this tick still holds are written: a lease
-- that ran out and was claimed by another tick is not overwritten.
--   due_at   absolute next_attempt_at, or NULL to use now() + delay_ms
--   refund   1 gives back the attempt the claim charged (blocks, releases)
--   email    the found address, written to leads unless it has one already
--   held, held_by  an address a finder found that awaits verification, and
--            that finder (NULL: none)
--   missed   the finders that answered without an address, comma-separated
--   keep     1 leaves found_email, found_by and missed_by as they are (a
--            lead given back unworked: an address the guard kept when the
--            call was billed stays)
--   doubted  the finders in doubt for the lead, comma-separated (one asked
--            again and answering leaves it; one cut with its request out
--            joins it); kept as it is on keep = 1
--   doubt_now  1 starts the lead's in-doubt wait now (doubted_at)
WITH o AS (
    SELECT o.*, coalesce(o.due_at, now() + o.delay_ms * interval '1 millisecond') AS next_at
    FROM unnest(@lead_ids::bigint[], @statuses::text[], @due_at::timestamptz[], @delays_ms::bigint[], @refunds::int[], @providers::text[], @errors::text[], @emails::text[],
                @held::text[], @held_by::text[], @missed_by::text[], @keep_found::int[], @doubted::text[], @doubt_now::int[])
        AS o(lead_id, status, due_at, delay_ms, refund, provider, last_error, email, held, held_by, missed, keep, doubted, doubt_now)
),
e AS (
    UPDATE lead_enrichment e
    SET status               = o.status,
        next_attempt_at      = o.next_at,
        negative_cache_until = CASE WHEN o.status = 'unreachable' THEN o.next_at END,
        locked_until         = NULL,
        locked_by            = NULL,
        attempts             = greatest(e.attempts - o.refund, 0),
        provider             = coalesce(o.provider, e.provider),
        last_error           = o.last_error,
        found_email          = CASE WHEN o.keep = 1 THEN e.found_email ELSE o.held END,
        found_by             = CASE WHEN o.keep = 1 THEN e.found_by ELSE o.held_by END,
        missed_by            = CASE WHEN o.keep = 1 THEN e.missed_by ELSE coalesce(string_to_array(o.missed, ','), '{}') END,
        doubted_by           = CASE WHEN o.keep = 1 THEN e.doubted_by ELSE coalesce(string_to_array(o.doubted, ','), '{}') END,
        doubted_at           = CASE WHEN o.keep = 0 AND o.doubt_now = 1 THEN now() ELSE e.doubted_at END,
        updated_at           = now()
    FROM o
    WHERE e.lead_id = o.lead_id AND e.status = 'in_progress' AND e.locked_by = @tick_id
    RETURNING e.lead_id
),
l AS (
    UPDATE leads l
    SET email = o.email, email_source = o.provider, updated_at = now()
    FROM o JOIN e ON e.lead_id = o.lead_id
    WHERE l.id = o.lead_id AND o.email IS NOT NULL AND l.email IS NULL
)
SELECT count(*) FROM e;
