{#- Lines of the landing runs the manifest lists: an interrupted landing's lines, appended before
    its manifest rows, wait for the run that finishes it (cdc_warehouse/landing.py). -#}
{% macro in_manifest(landed_files) -%}
    landing_run <= (select max(landing_run) from {{ landed_files }})
{%- endmacro %}
