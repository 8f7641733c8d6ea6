"""The view of an environment report: iteragpu, the system, the backend and the GPUs."""

from .cells import bytes_cell, escape, html_section, html_table


def environment_html(report):
    rows = [
        ["iteragpu", f"{escape(report.iteragpu_version)} <small>({escape(report.iteragpu_build)})</small>"],
        ["system", escape(
            f"{report.os_name} {report.kernel_release} {report.architecture}"
            + (f", {report.os_distribution}" if report.os_distribution else "")
            + f", {report.libc}"
        )],
    ]
    if report.backend_available:
        rows.append(["LibTorch backend", f"loaded from <code>{escape(report.backend_path)}</code>"])
    else:
        rows.append(["LibTorch backend", f"<strong>not available</strong>: {escape(report.backend_error)}"])
    stack = report.stack
    gpus_html = ""
    if stack is not None:
        rows += [
            ["LibTorch", escape(stack.torch_version)],
            ["CUDA (LibTorch built with; not the driver)", escape(stack.cuda_build_version or "none")],
            ["HIP (ROCm build)", escape(stack.hip_build_version or "none")],
            ["cuDNN", escape(stack.cudnn_version or "none")],
            ["GPU runtime available", "yes" if stack.gpu_runtime_available
             else f"<strong>no</strong>: {escape(stack.no_gpu_reason)}"],
        ]
        if stack.gpu_runtime_available and not stack.gpus:  # the CLI's "GPUs: none visible"
            rows.append(["GPUs", f"<strong>none visible</strong>: {escape(stack.no_gpu_reason)}"])
        if stack.gpus:
            gpus_html = html_table(
                ["index", "name", "compute capability", "memory", "multiprocessors"],
                [
                    [
                        str(gpu.index),
                        escape(gpu.name),
                        f"{gpu.compute_capability_major}.{gpu.compute_capability_minor}",
                        bytes_cell(gpu.total_memory_bytes),
                        str(gpu.multiprocessors),
                    ]
                    for gpu in stack.gpus
                ],
            )
    selected = escape(report.selected_device) + ("" if report.selected_present else " (not present)")
    if stack is not None and stack.selected_free_bytes is not None:
        selected += (
            f": free {bytes_cell(stack.selected_free_bytes)} of "
            f"{bytes_cell(stack.selected_total_bytes)} (as the runtime reports)"
        )
    rows.append(["selected device", selected])
    if report.nvidia_driver_version:
        rows.append(
            ["NVIDIA driver", f"{escape(report.nvidia_driver_version)} <small>(from {escape(report.nvidia_driver_source)})</small>"]
        )
    return html_section("Environment", html_table(None, rows) + gpus_html)
