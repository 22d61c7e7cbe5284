-- The staging table each batch is copied into (line = the CSV line, for
-- reports); emptied after each batch, dropped at commit.
CREATE TEMP TABLE lead_import (
    line           integer NOT NULL,
    external_id    text,
    first_name     text NOT NULL,
    last_name      text NOT NULL,
    company        text NOT NULL,
    company_domain text NOT NULL,
    email          text,
    timezone       text
) ON COMMIT DROP;
