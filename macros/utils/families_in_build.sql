{#- The families whose lines this build processes, none for all. `cdcw run` builds only the
    families with lines after its last successful build, and sets the session setting
    cdc.build_families to them (cdc_warehouse/steps.py, BUILD_FAMILIES_SETTING); the others have
    no line after that build, which read all of theirs. A model that unions every family's rows
    since its watermark then reads only these families' tables: each table it leaves out costs
    a read of its Delta log and a scan that finds nothing. Any other command, or a build of every
    family, leaves the setting unset. -#}
{% macro families_in_build() -%}
    {%- if not execute -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set setting = run_query('set cdc.build_families').rows[0][1] -%}
    {{ return(none if setting in ('', '<undefined>') else setting.split(',')) }}
{%- endmacro %}
