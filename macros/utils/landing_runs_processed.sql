{#- The newest landing run this incremental model has processed, for a model whose rows are rare
    (truncates, snapshot files, quarantined lines): its newest row's, or, when newer, the landing
    run through which `cdcw run`'s last successful build of the same project and arguments went
    (session setting cdc.built_through, cdc_warehouse/steps.py, BUILT_THROUGH_SETTING). That
    build's models read every line through it, so this one reads the lines after it, not every
    line since its own last row, which may be months old. A failed or killed build leaves the
    record of the one before it, so the setting never passes what the model has processed.
    -1 on a full build. -#}
{% macro landing_runs_processed() -%}
    {%- if not is_incremental() -%}
        {{ return(-1) }}
    {%- endif -%}
    {%- set newest_row = max_processed(this, 'landing_run') -%}
    {%- set built = landing_run_setting('cdc.built_through') -%}
    {{ return([newest_row | int, -1 if built is none else built] | max) }}
{%- endmacro %}
