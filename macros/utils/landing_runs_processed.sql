{#- The newest landing run this incremental model has processed, for a model that reads the
    lines (or upstream rows) of the landing runs after it: -1 on a full build; else the landing
    run through which `cdcw run`'s last successful build of the same project and arguments went
    (session setting cdc.built_through, cdc_warehouse/steps.py, BUILT_THROUGH_SETTING), when
    the model's newest write belongs to that build or an earlier one (its commit's tag names
    that landing run or an older one: a read of the Delta log, not of the rows); else the newer
    of that landing run and the newest `column` among the model's rows.
    That build's models read every line through it, so this one reads the lines after it, not
    every line since its own last row, which may be months old when its rows are rare
    (truncates, snapshot files, quarantined lines). A failed or killed build leaves the record
    of the one before it, and its writes name a newer landing run, so the rows answer then; a
    write outside `cdcw` names none (docs/decisions/016). -#}
{% macro landing_runs_processed(column='landing_run') -%}
    {%- if not is_incremental() -%}
        {{ return(-1) }}
    {%- endif -%}
    {%- set built = landing_run_setting('cdc.built_through') -%}
    {%- if built is not none -%}
        {%- set tag = fromjson(newest_write_tag(table_commits(this)) | trim or '{}', {}) -%}
        {%- set written_in = tag.get('landing_run') if tag is mapping else none -%}
        {%- if written_in is integer and written_in <= built -%}
            {{ return(built) }}
        {%- endif -%}
    {%- endif -%}
    {%- set newest_row = max_processed(this, column) -%}
    {{ return([newest_row | int, -1 if built is none else built] | max) }}
{%- endmacro %}
