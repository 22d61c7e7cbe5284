-- Enrolls leads; a lead already in the campaign is left as it is.
INSERT INTO enrollments (campaign_id, workspace_id, lead_id, next_send_at, mailbox_id)
SELECT @campaign_id, @workspace_id, u.lead_id, u.next_send_at, u.mailbox_id
FROM unnest(@lead_ids::bigint[], @next_send_at::timestamptz[], @mailbox_ids::bigint[]) AS u (lead_id, next_send_at, mailbox_id)
ON CONFLICT (campaign_id, lead_id) DO NOTHING;
