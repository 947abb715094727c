{#- The commits this model makes from now on record `landing_run` as the newest landing run it
    has processed, beside the landing run `cdcw` tags every commit with
    (cdc_warehouse/table_format.py, WATERMARK): the MERGE and its watermark are one commit, so
    a run killed before it leaves the previous watermark (docs/decisions/016). -#}
{% macro record_watermark(landing_run) -%}
    {%- do set_commit_watermark({'table': this.identifier, 'landing_run': landing_run | int}) -%}
{%- endmacro %}
