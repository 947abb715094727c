{#- This file holds `record_watermark` and `unrecord_watermark`, a pair always used together (a
    mart records its watermark as it compiles and takes it back in its last post-hook), and
    the setter they share. -#}

{#- The commits this model makes from now on record `landing_run` as the newest landing run it
    has processed, beside the landing run `cdcw` tags every commit with
    (cdc_warehouse/table_format.py, WATERMARK): the MERGE and its watermark are one commit, so
    a run killed before it leaves the previous watermark (docs/decisions/016). -#}
{% macro record_watermark(landing_run) -%}
    {%- do set_commit_watermark({'table': this.identifier, 'landing_run': landing_run | int}) -%}
{%- endmacro %}


{% macro unrecord_watermark() -%}
    {%- do set_commit_watermark(none) -%}
{%- endmacro %}


{#- The session's commit tag (Delta's userMetadata, a JSON object) with `watermark` set, or
    removed when none. Only in a command that writes models: one that compiles them (compile,
    show, docs) writes no commit the watermark could belong to. -#}
{% macro set_commit_watermark(watermark) -%}
    {%- if execute and flags.WHICH in ['run', 'build'] -%}
        {%- set setting = 'spark.databricks.delta.commitInfo.userMetadata' -%}
        {%- set tag = fromjson(run_query('set ' ~ setting).rows[0][1], {}) -%}
        {%- set tag = tag if tag is mapping else {} -%}
        {%- do tag.pop('watermark', none) -%}
        {%- if watermark is not none -%}
            {%- do tag.update({'watermark': watermark}) -%}
        {%- endif -%}
        {%- do run_query('set ' ~ setting ~ '=' ~ tojson(tag)) -%}
    {%- endif -%}
{%- endmacro %}
