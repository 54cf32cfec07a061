"""MQSim device configurations (ssdconfig.xml) as timing devices: `timing="FILE.xml"`,
`--timing FILE.xml` and `wafer presets import FILE.xml -o NAME.toml` (issue 32 item 5)."""

import json
import subprocess
import sys

import pytest

import wafer

# The elements of MQSim's shipped ssdconfig.xml (CMU-SAFARI/MQSim @ 7ec40e3) with its values,
# which preset mqsim-default was written from; (set, element, value) in the file's order.
SHIPPED = [
    ("host", "PCIe_Lane_Bandwidth", "1.00000"), ("host", "PCIe_Lane_Count", "4"),
    ("host", "SATA_Processing_Delay", "400000"), ("host", "Enable_ResponseTime_Logging", "false"),
    ("host", "ResponseTime_Logging_Period_Length", "1000000"),
    ("device", "Seed", "321"), ("device", "Enabled_Preconditioning", "false"), ("device", "Memory_Type", "FLASH"),
    ("device", "HostInterface_Type", "NVME"), ("device", "IO_Queue_Depth", "65535"),
    ("device", "Queue_Fetch_Size", "512"), ("device", "Caching_Mechanism", "ADVANCED"),
    ("device", "Data_Cache_Sharing_Mode", "SHARED"), ("device", "Data_Cache_Capacity", "268435456"),
    ("device", "Data_Cache_DRAM_Row_Size", "8192"), ("device", "Data_Cache_DRAM_Data_Rate", "100"),
    ("device", "Data_Cache_DRAM_Data_Busrt_Size", "1"), ("device", "Data_Cache_DRAM_tRCD", "13"),
    ("device", "Data_Cache_DRAM_tCL", "13"), ("device", "Data_Cache_DRAM_tRP", "13"),
    ("device", "Address_Mapping", "PAGE_LEVEL"), ("device", "Ideal_Mapping_Table", "false"),
    ("device", "CMT_Capacity", "2097152"), ("device", "CMT_Sharing_Mode", "SHARED"),
    ("device", "Plane_Allocation_Scheme", "CWDP"), ("device", "Transaction_Scheduling_Policy", "PRIORITY_OUT_OF_ORDER"),
    ("device", "Overprovisioning_Ratio", "0.07"), ("device", "GC_Exec_Threshold", "0.05000"),
    ("device", "GC_Block_Selection_Policy", "RGA"), ("device", "Use_Copyback_for_GC", "false"),
    ("device", "Preemptible_GC_Enabled", "false"), ("device", "GC_Hard_Threshold", "0.005000"),
    ("device", "Dynamic_Wearleveling_Enabled", "true"), ("device", "Static_Wearleveling_Enabled", "true"),
    ("device", "Static_Wearleveling_Threshold", "100"),
    ("device", "Preferred_suspend_erase_time_for_read", "700000"),
    ("device", "Preferred_suspend_erase_time_for_write", "700000"),
    ("device", "Preferred_suspend_write_time_for_read", "100000"),
    ("device", "Flash_Channel_Count", "8"), ("device", "Flash_Channel_Width", "1"),
    ("device", "Channel_Transfer_Rate", "333"), ("device", "Chip_No_Per_Channel", "4"),
    ("device", "Flash_Comm_Protocol", "NVDDR2"),
    ("flash", "Flash_Technology", "MLC"), ("flash", "CMD_Suspension_Support", "ERASE"),
    ("flash", "Page_Read_Latency_LSB", "75000"), ("flash", "Page_Read_Latency_CSB", "75000"),
    ("flash", "Page_Read_Latency_MSB", "75000"), ("flash", "Page_Program_Latency_LSB", "750000"),
    ("flash", "Page_Program_Latency_CSB", "750000"), ("flash", "Page_Program_Latency_MSB", "750000"),
    ("flash", "Block_Erase_Latency", "3800000"), ("flash", "Block_PE_Cycles_Limit", "10000"),
    ("flash", "Suspend_Erase_Time", "700000"), ("flash", "Suspend_Program_Time", "100000"),
    ("flash", "Die_No_Per_Chip", "2"), ("flash", "Plane_No_Per_Die", "2"), ("flash", "Block_No_Per_Plane", "2048"),
    ("flash", "Page_No_Per_Block", "256"), ("flash", "Page_Capacity", "8192"), ("flash", "Page_Metadat_Capacity", "448"),
]


def mqsim_xml(over=(), extra=()):
    """An MQSim-shaped device configuration: SHIPPED with `over` {element: value} replaced and
    `extra` (set, element, value) appended to their sets."""
    over = dict(over)
    rows = [(s, k, over.get(k, v)) for s, k, v in SHIPPED] + list(extra)
    body = {s: "".join(f"    <{k}>{v}</{k}>\n" for t, k, v in rows if t == s) for s in ("host", "device", "flash")}
    return ('<?xml version="1.0" encoding="us-ascii"?>\n<Execution_Parameter_Set>\n'
            f"  <Host_Parameter_Set>\n{body['host']}  </Host_Parameter_Set>\n"
            f"  <Device_Parameter_Set>\n{body['device']}"
            f"  <Flash_Parameter_Set>\n{body['flash']}  </Flash_Parameter_Set>\n"
            "  </Device_Parameter_Set>\n</Execution_Parameter_Set>\n")


def cli(*args, ok=True):
    p = subprocess.run([sys.executable, "-m", "wafer", *args], capture_output=True, text=True, timeout=300)
    if ok:
        assert p.returncode == 0, p.stderr
    return p


def test_the_shipped_config_is_preset_mqsim_default(tmp_path):
    x = tmp_path / "ssdconfig.xml"
    x.write_text(mqsim_xml())
    c = wafer.timing_config(x)
    warned = [w.split(" ")[0] for w in c.pop("import_warnings")]
    assert warned == ["Dynamic_Wearleveling_Enabled", "Static_Wearleveling_Enabled", "GC_Block_Selection_Policy"]
    want = wafer.timing_config("mqsim-default")
    assert c["name"] == "ssdconfig" and c["description"].startswith("MQSim configuration ssdconfig.xml")
    assert {**c, "name": "", "description": ""} == {**want, "name": "", "description": ""}


def test_an_unknown_element_is_warned_and_bad_input_names_the_element(tmp_path):
    x = tmp_path / "d.xml"
    x.write_text(mqsim_xml(extra=[("device", "Flash_Chanel_Count", "4")]))
    c = wafer.timing_config(x)
    assert any(w.startswith("Flash_Chanel_Count (line ") and "Flash_Channel_Count?" in w
               for w in c["import_warnings"])
    assert c["flash"]["channels"] == 8
    for text, match in [
        (mqsim_xml().replace("</Page_Capacity>", ""), "d.xml: not well-formed XML"),
        (mqsim_xml({"Block_No_Per_Plane": "many"}), r"d.xml:\d+: <Block_No_Per_Plane>: 'many' is not a whole number"),
        (mqsim_xml({"Page_Capacity": "3000"}), r"<Page_Capacity>: 3000; must be a power of two"),
        (mqsim_xml({"Chip_No_Per_Channel": "0"}), r"<Chip_No_Per_Channel>: 0; must be at least 1"),
    ]:
        x.write_text(text)
        with pytest.raises(wafer.ConfigError, match=match):
            wafer.timing_config(x)


def test_an_imported_preset_runs_as_the_xml(tmp_path):
    x = tmp_path / "drive.xml"
    # A small drive (2 x 2 x 1 x 2 x 256 blocks of 64 pages of 8 KiB) so the run takes a second.
    x.write_text(mqsim_xml({"Flash_Channel_Count": "2", "Chip_No_Per_Channel": "2", "Die_No_Per_Chip": "1",
                            "Block_No_Per_Plane": "256", "Page_No_Per_Block": "64",
                            "GC_Block_Selection_Policy": "GREEDY"}))
    t = tmp_path / "drive.toml"
    p = cli("presets", "import", str(x), "-o", str(t))
    assert f"wrote {t}" in p.stderr
    text = t.read_text()
    assert text.startswith("# Imported by `wafer presets import`") and "# * Dynamic_Wearleveling_Enabled" in text
    assert wafer.timing_config(t) == wafer.timing_config(x)
    args = ["--workload", "uniform,reads=0.3", "--precondition", "1.2", "--writes", "20000",
            "--queue-depth", "8", "--json"]
    outs = [json.loads(cli("replay", "--timing", str(f), *args).stdout) for f in (x, t)]
    for out in outs:
        assert "mqsim-xml-unsupported" in {w["code"] for w in out["warnings"]}
    runs = [out["timing"] for out in outs]
    for r in runs:
        for k in ("requests_per_wall_second", "flash_ops_per_wall_second", "wall_seconds", "precondition_seconds"):
            r.pop(k)
    assert runs[0] == runs[1] and runs[0]["preset"] == "drive" and runs[0]["requests"] > 0
    assert cli("presets", "import", str(t), ok=False).returncode != 0
