-- Drops from the staged batch the lines whose address belongs to a person
-- forgotten in workspace @workspace_id (`rindactl lead forget`: only the address's
-- hash is left in suppressions): their data is not stored again.
DELETE FROM lead_import s
WHERE s.email IS NOT NULL
  AND EXISTS (SELECT 1 FROM suppressions sp
              WHERE sp.workspace_id = @workspace_id AND sp.email IS NULL AND sp.email_sha256 = address_sha256(s.email));
