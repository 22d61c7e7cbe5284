-- The staging table COPY fills; dropped at commit.
CREATE TEMP TABLE lead_import (
    external_id    text,
    first_name     text NOT NULL,
    last_name      text NOT NULL,
    company        text NOT NULL,
    company_domain text NOT NULL,
    email          text,
    timezone       text
) ON COMMIT DROP
