{#- `cdcw run`, the scheduled job, sets the session setting cdc.test_from_landing_run
    (cdc_warehouse/steps.py, TEST_SCOPE_SETTING) to the first landing run its build processes, or
    the var cdc_test_from_landing_run does: a setting, so that dbt's parse of the project does not
    change from run to run (vars are part of it, and a new value means parsing all again). The
    tests of the models that follow cdc_history (cdc_history,
    cdc_current and the typed views over them) then read only the rows the build rewrote (of
    the keys it recomputed, the versions from the first its changes reach, docs/decisions/003;
    any other row is unchanged and was tested when it was written, docs/decisions/006), the
    Spanner tests read only the changes it applied, and the
    uniqueness tests of the append-only key registry and Spanner transactions only the values
    it appended. Without either (any `cdcw dbt test`, a full refresh) they read everything.
    Typed column discovery (macros/marts/typed_table.sql) reads the same rows. -#}

{#- The first landing run whose rows this build tests, none for every row (always none while
    dbt parses). -#}
{% macro tested_from_landing_run() -%}
    {%- set from_var = var('cdc_test_from_landing_run', none) -%}
    {%- if from_var is not none -%}
        {{ return(from_var) }}
    {%- endif -%}
    {{ return(landing_run_setting('cdc.test_from_landing_run')) }}
{%- endmacro %}
