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
