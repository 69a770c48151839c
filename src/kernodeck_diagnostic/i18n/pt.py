"""Portuguese messages: the same keys and placeholders as the English catalog (en.py)."""

from __future__ import annotations

INSTALL = ("python -m pip install --force-reinstall torch --index-url "
           "https://download.pytorch.org/whl/cu128 (NVIDIA; escolha a versão CUDA suportada pelo "
           "seu driver) ou --index-url https://download.pytorch.org/whl/rocm6.4 (AMD)")

MESSAGES = {
    # -- result codes ----------------------------------------------------------------------------
    "code.GPU_CHECK_PASSED.summary": "Produto e gradiente verificados na GPU escolhida.",
    "code.GPU_CHECK_PASSED.next_action": "Passe para uma pequena entrada da sua aplicação.",
    "code.CPU_CHECK_PASSED.summary": "Produto e gradiente verificados somente na CPU.",
    "code.CPU_CHECK_PASSED.next_action":
        "Não conclua nada sobre CUDA ou ROCm: execute sem --device cpu para verificar a GPU.",
    "code.INTERNAL_ERROR.summary": "O próprio diagnóstico falhou (um bug na ferramenta).",
    "code.INTERNAL_ERROR.next_action": "Relate o problema informando o comando executado.",
    "code.USAGE_ERROR.summary": "Argumentos inválidos.",
    "code.USAGE_ERROR.next_action": "Leia a mensagem de uma linha e depois consulte --help.",
    "code.TORCH_MISSING.summary": "O PyTorch não está instalado neste Python.",
    "code.TORCH_MISSING.next_action":
        "Verifique qual interpretador executa o seu projeto e depois instale o PyTorch nele.",
    "code.TORCH_IMPORT_FAILED.summary": "import torch falhou.",
    "code.TORCH_IMPORT_FAILED.next_action":
        "Verifique o interpretador, o pacote PyTorch e suas dependências.",
    "code.GPU_BACKEND_ABSENT.summary":
        "Este pacote do PyTorch não declara nem CUDA nem HIP (um pacote somente para CPU).",
    "code.GPU_BACKEND_ABSENT.next_action":
        "Instale o pacote do PyTorch adequado à sua GPU (CUDA ou ROCm).",
    "code.GPU_UNAVAILABLE.summary": "A GPU não é utilizável neste processo.",
    "code.GPU_UNAVAILABLE.next_action":
        "Verifique a exposição da placa a este processo, o driver e as permissões.",
    "code.DEVICE_INDEX_INVALID.summary":
        "O índice do dispositivo está fora dos dispositivos visíveis.",
    "code.DEVICE_INDEX_INVALID.next_action":
        "Solicite um índice menor que o número de dispositivos visíveis.",
    "code.CHECK_FAILED.summary": "O cálculo fixo produziu um resultado incorreto.",
    "code.CHECK_FAILED.next_action":
        "Leia a etapa sinalizada antes de executar o modelo completo.",
    "code.OUT_OF_MEMORY.summary": "A alocação no dispositivo falhou: memória insuficiente.",
    "code.OUT_OF_MEMORY.next_action":
        "Leia a etapa sinalizada; verifique o que mais ocupa memória nesse dispositivo.",
    "code.RUNTIME_ERROR.summary": "Uma operação do backend falhou.",
    "code.RUNTIME_ERROR.next_action":
        "Leia a etapa sinalizada e o erro antes de executar o modelo completo.",
    "code.TIMEOUT.summary": "A verificação foi interrompida pelo tempo limite.",
    "code.TIMEOUT.next_action":
        "Trate o controle como uma falha; examine o ambiente na etapa indicada.",
    "code.WORKER_FAILED.summary": "A verificação terminou sem um relatório utilizável.",
    "code.WORKER_FAILED.next_action":
        "Trate o controle como uma falha; examine o ambiente na etapa indicada.",
    "code.OUTPUT_WRITE_FAILED.summary": "O relatório não foi salvo no destino solicitado.",
    "code.OUTPUT_WRITE_FAILED.next_action":
        "Use um novo nome de arquivo em uma pasta com permissão de escrita.",
    "code.STDOUT_WRITE_FAILED.summary": "O resultado não pôde ser escrito na saída padrão.",
    "code.STDOUT_WRITE_FAILED.next_action":
        "Envie a saída padrão para um terminal, um pipe ou um arquivo com espaço; guarde o "
        "relatório com --output.",
    "code.INTERRUPTED.summary":
        "Parado por um sinal: Ctrl-C (SIGINT), SIGTERM ou SIGHUP (o terminal foi fechado).",
    "code.INTERRUPTED.next_action": "Execute-a novamente quando puder.",

    # -- findings ---------------------------------------------------------------------------------
    "finding.CPU_ONLY_BUILD.summary":
        "O PyTorch instalado é um pacote somente para CPU: ele não pode usar nenhuma GPU.",
    "finding.CPU_ONLY_BUILD.next_action":
        "Instale um pacote para GPU neste interpretador: " + INSTALL + ".",
    "finding.NVIDIA_DRIVER_MISSING.summary":
        "Nenhum driver NVIDIA está acessível a partir deste processo (nenhum instalado, ou um "
        "contêiner iniciado sem o runtime de GPU).",
    "finding.NVIDIA_DRIVER_MISSING.next_action":
        "Em um host: instale o driver NVIDIA (nvidia-smi deve funcionar). Em um contêiner: "
        "inicie-o com o runtime de GPU, por exemplo docker run --gpus all (NVIDIA Container "
        "Toolkit).",
    "finding.BUILD_FOR_OTHER_VENDOR.amd.summary":
        "Este PyTorch é um pacote CUDA, para GPUs NVIDIA, mas a GPU desta máquina é AMD: o pacote "
        "não pode usá-la.",
    "finding.BUILD_FOR_OTHER_VENDOR.amd.next_action":
        "Instale um pacote ROCm para a GPU AMD: python -m pip install --force-reinstall torch "
        "--index-url https://download.pytorch.org/whl/rocm6.4 (escolha a versão ROCm suportada "
        "pelo seu driver).",
    "finding.BUILD_FOR_OTHER_VENDOR.nvidia.summary":
        "Este PyTorch é um pacote ROCm, para GPUs AMD, mas a GPU desta máquina é NVIDIA: o pacote "
        "não pode usá-la.",
    "finding.BUILD_FOR_OTHER_VENDOR.nvidia.next_action":
        "Instale um pacote CUDA para a GPU NVIDIA: python -m pip install --force-reinstall torch "
        "--index-url https://download.pytorch.org/whl/cu128 (escolha a versão CUDA suportada pelo "
        "seu driver).",
    "finding.DRIVER_TOO_OLD.summary":
        "O driver NVIDIA é antigo demais para este pacote do PyTorch (CUDA {build}).",
    "finding.DRIVER_TOO_OLD.next_action":
        "Atualize o driver (pelo menos {minimum} no Linux para CUDA {major}.x) ou instale um "
        "pacote do torch para a versão CUDA suportada pelo driver, por exemplo --index-url "
        "https://download.pytorch.org/whl/cu126.",
    "finding.DRIVER_TOO_OLD.forward_compat.summary":
        "O driver NVIDIA ({driver}) é mais antigo do que o CUDA {major}.x exige ({minimum}), mas "
        "executou este pacote CUDA {build}: um pacote de compatibilidade futura do CUDA "
        "(cuda-compat, como nos contêineres NGC) está em uso.",
    "finding.DRIVER_TOO_OLD.forward_compat.next_action":
        "Nada a corrigir nesta verificação. A compatibilidade futura só funciona em GPUs de data "
        "center (e em algumas placas RTX certificadas e placas Jetson), e só com o pacote "
        "cuda-compat correspondente ao pacote do torch; para dispensá-lo, atualize o driver para "
        "pelo menos {minimum}.",
    "finding.ARCH_NOT_IN_BUILD.summary":
        "Este pacote do PyTorch não tem código para a arquitetura desta GPU.",
    "finding.ARCH_NOT_IN_BUILD.next_action":
        "Instale um pacote que liste o sm_XY desta GPU em torch.cuda.get_arch_list() (GPUs mais "
        "recentes exigem pacotes CUDA mais recentes, por exemplo --index-url "
        "https://download.pytorch.org/whl/cu128 para Blackwell) ou compile o PyTorch com "
        "TORCH_CUDA_ARCH_LIST definido para ela.",
    "finding.ARCH_PTX_ONLY.summary":
        "Esta GPU executa o PyTorch apenas por meio de PTX compilado em tempo de execução: as "
        "primeiras chamadas são lentas.",
    "finding.ARCH_PTX_ONLY.next_action":
        "Instale um pacote com código nativo (sm_XY) para esta GPU; enquanto isso, mantenha o "
        "cache JIT (CUDA_CACHE_MAXSIZE, ~/.nv/ComputeCache) entre as execuções.",
    "finding.DEVICES_HIDDEN.summary":
        "Uma variável de visibilidade de dispositivos oculta todas as GPUs para este processo.",
    "finding.DEVICES_HIDDEN.next_action":
        "Remova-a (unset {variable}) ou liste as GPUs a usar, por exemplo {variable}=0.",
    "finding.FABRIC_MANAGER_NOT_READY.summary":
        "As GPUs não estão prontas: em sistemas NVSwitch, o Fabric Manager não está em execução "
        "(CUDA 802).",
    "finding.FABRIC_MANAGER_NOT_READY.next_action":
        "Inicie-o, na mesma versão exata do driver: sudo systemctl enable --now "
        "nvidia-fabricmanager; depois verifique systemctl status nvidia-fabricmanager.",
    "finding.DRIVER_LIBRARY_MISMATCH.summary":
        "O driver do kernel e a biblioteca do driver em espaço de usuário (libcuda) têm versões "
        "diferentes (CUDA 803).",
    "finding.DRIVER_LIBRARY_MISMATCH.next_action":
        "Reinicie a máquina após uma atualização do driver ou reinstale o driver para que ambos "
        "correspondam; em um contêiner, não inclua a libcuda na imagem (deixe o runtime de GPU "
        "montar a do host).",
    "finding.FORWARD_COMPAT_UNSUPPORTED.summary":
        "Uma biblioteca CUDA de compatibilidade futura (forward compatibility) está em uso em "
        "uma GPU que não a suporta (CUDA 804).",
    "finding.FORWARD_COMPAT_UNSUPPORTED.next_action":
        "Remova as bibliotecas cuda-compat do LD_LIBRARY_PATH (ou da imagem) ou atualize o "
        "driver para que ele suporte diretamente o CUDA deste pacote.",
    "finding.CUDA_UNKNOWN_ERROR.summary":
        "O driver CUDA relata um erro desconhecido (999), muitas vezes após uma suspensão e "
        "retomada.",
    "finding.CUDA_UNKNOWN_ERROR.next_action":
        "Recarregue o módulo de memória unificada (sudo rmmod nvidia_uvm && sudo modprobe "
        "nvidia_uvm) ou reinicie a máquina; depois execute a verificação novamente.",
    "finding.MIG_SLICE.summary":
        "Uma partição MIG está em uso: ela tem uma fração da memória e do poder de cálculo da "
        "GPU.",
    "finding.MIG_SLICE.next_action":
        "Dimensione seu trabalho para a partição, não para a placa inteira; para endereçar uma "
        "partição, use em CUDA_VISIBLE_DEVICES o UUID dela mostrado por nvidia-smi -L.",
    "finding.NUMPY_MISSING.summary":
        "O NumPy não está instalado junto com o torch: tensor.numpy() e a maior parte do "
        "carregamento de dados vão falhar.",
    "finding.NUMPY_MISSING.next_action":
        "python -m pip install numpy (com o mesmo interpretador).",
    "finding.NUMPY_ABI_MISMATCH.summary":
        "A versão do NumPy não corresponde àquela com que este torch (ou uma extensão) foi "
        "compilado.",
    "finding.NUMPY_ABI_MISMATCH.next_action":
        'python -m pip install "numpy<2" para um pacote compilado com NumPy 1.x, ou atualize o '
        "torch e a extensão para pacotes feitos para NumPy 2.",
    "finding.WARNING_AS_ERROR.summary":
        "Os filtros de avisos do interpretador transformam avisos em erros, e um {category} "
        "interrompeu a verificação: o seu programa falha da mesma forma quando iniciado assim.",
    "finding.WARNING_AS_ERROR.next_action":
        "Retire o -W error (ou PYTHONWARNINGS=error) deste programa, ou deixe passar este aviso "
        "com um filtro ignore depois dele: -W error -W ignore::{category} "
        "(PYTHONWARNINGS=error,ignore::{category}), indicando o módulo se puder.",
    "finding.TORCH_SHADOWED.local_file.summary":
        "'import torch' carregaria {module} em vez de um pacote PyTorch instalado.",
    "finding.TORCH_SHADOWED.local_file.next_action":
        "Renomeie {module} (por exemplo um script seu para torch_demo.py) ou tire-o dessa pasta, "
        "e apague a pasta __pycache__ ao lado dele; ou rode seu programa de outra pasta.",
    "finding.TORCH_SHADOWED.local_folder.summary":
        "'import torch' carregaria a pasta {module} em vez de um pacote PyTorch instalado.",
    "finding.TORCH_SHADOWED.local_folder.next_action":
        "Renomeie a pasta {module} (ou tire-a dali), ou rode seu programa de outra pasta.",
    "finding.TORCH_SHADOWED.checkout.summary":
        "'import torch' carregaria a pasta torch/ de um checkout do código-fonte do PyTorch, não "
        "compilado aqui, em vez de um pacote PyTorch instalado.",
    "finding.TORCH_SHADOWED.checkout.next_action":
        "Rode seu programa de outra pasta (cd ..), ou compile e instale o checkout neste "
        "interpretador (python -m pip install -e . -v --no-build-isolation).",
    "finding.TORCH_SHADOWED.pythonpath.summary":
        "'import torch' carregaria {module} de uma pasta do PYTHONPATH em vez de um pacote "
        "PyTorch instalado.",
    "finding.TORCH_SHADOWED.pythonpath.next_action":
        "Tire essa pasta do PYTHONPATH (ou apague o PYTHONPATH), ou renomeie {module} nela; "
        "--show-paths mostra onde está, só no seu terminal.",
    "finding.TORCH_SHADOWED.stray.summary":
        "'import torch' carregaria {module}, uma cópia perdida, em vez de um pacote PyTorch "
        "instalado.",
    "finding.TORCH_SHADOWED.stray.next_action":
        "Remova {module} perdido (--show-paths mostra onde está, só no seu terminal), depois "
        "reinstale o PyTorch: python -m pip install --force-reinstall torch.",
    "finding.LOCAL_MODULE_SHADOWS.summary":
        "Módulos na pasta de onde seu programa parte escondem módulos de que ele precisa: "
        "{names}.",
    "finding.LOCAL_MODULE_SHADOWS.next_action":
        "Renomeie-os (e apague a pasta __pycache__ ao lado deles), ou rode seu programa de outra "
        "pasta: python app.py ali importa esses no lugar dos da biblioteca padrão ou dos do "
        "próprio torch.",
    "finding.TORCH_DUPLICATE_INSTALL.summary":
        "Mais de uma instalação do PyTorch está visível para este interpretador; a que é "
        "importada pode não ser a que você instalou.",
    "finding.TORCH_DUPLICATE_INSTALL.next_action":
        "Execute python -m pip uninstall torch até o pip dizer que o torch não está instalado "
        "(cada execução remove a primeira instalação no caminho, inclusive a do site-packages do "
        "usuário; uma cópia que o pip não toca, no PYTHONPATH por exemplo, sai ao tirar a pasta "
        "dela do caminho), depois instale um único pacote.",
    "finding.SHARED_LIBRARY_MISSING.driver.summary":
        "import torch precisa de {library}, uma biblioteca do driver NVIDIA, que não foi "
        "encontrada.",
    "finding.SHARED_LIBRARY_MISSING.driver.next_action":
        "{library} vem com o driver NVIDIA, nunca com um pacote Python (reinstalar o torch não a "
        "traz de volta): em um host, instale o driver (nvidia-smi deve funcionar); em um "
        "contêiner, inicie-o com o runtime de GPU (docker run --gpus all, NVIDIA Container "
        "Toolkit), que monta as bibliotecas do driver do host.",
    "finding.SHARED_LIBRARY_MISSING.cuda.summary":
        "import torch precisa de {library}, que não foi encontrada.",
    "finding.SHARED_LIBRARY_MISSING.cuda.next_action":
        "Restaure {library}: ela vem com os wheels nvidia-* dos quais o torch depende: python -m "
        "pip install --force-reinstall torch. Verifique também se LD_LIBRARY_PATH não aponta "
        "para outro lugar.",
    "finding.SHARED_LIBRARY_MISSING.system.summary":
        "import torch precisa de {library}, que não foi encontrada.",
    "finding.SHARED_LIBRARY_MISSING.system.next_action":
        "Restaure {library}: reinstale o torch (python -m pip install --force-reinstall torch); "
        "se a biblioteca pertencer ao sistema, instale-a com o gerenciador de pacotes do "
        "sistema. Verifique também se LD_LIBRARY_PATH não aponta para outro lugar.",
    "finding.UNDEFINED_SYMBOL.summary":
        "{library} não corresponde ao código que a carrega (símbolo indefinido {symbol}): dois "
        "pacotes diferentes estão misturados.",
    "finding.UNDEFINED_SYMBOL.next_action":
        "Remova a variável LD_LIBRARY_PATH (ela costuma apontar para outro CUDA ou cuDNN), "
        "depois reinstale o torch e suas extensões a partir de um único índice.",
    "finding.LIBRARY_PATH_OVERRIDE.variable.summary":
        "Uma pasta em {variable} fornece uma {library} que este torch não consegue carregar "
        "(versão errada, arquivo vazio ou danificado, ou feito para outra arquitetura).",
    "finding.LIBRARY_PATH_OVERRIDE.variable.next_action":
        "Remova {variable} para este programa, ou tire essa pasta dela; env -u {variable} "
        "python app.py confirma.",
    "finding.LIBRARY_PATH_OVERRIDE.conda.summary":
        "A pasta lib do ambiente conda ativo fornece uma {library} que este torch não consegue "
        "carregar (muitas vezes uma libstdc++ mais antiga do que o torch precisa).",
    "finding.LIBRARY_PATH_OVERRIDE.conda.next_action":
        "Atualize essa biblioteca no ambiente (para a libstdc++: conda install -c conda-forge "
        "libstdcxx-ng), ou execute o programa num ambiente cujas bibliotecas combinem com o torch.",
    "finding.WINDOWS_DLL_LOAD_FAILED.summary":
        "O Windows não conseguiu carregar {dll} ou uma de suas dependências.",
    "finding.WINDOWS_DLL_LOAD_FAILED.next_action":
        "Instale o Microsoft Visual C++ Redistributable (x64) mais recente, depois reinstale o "
        "torch (python -m pip install --force-reinstall torch).",
    "finding.ROCM_KFD_ACCESS.absent.summary":
        "/dev/kfd está ausente: o driver de GPU AMD (amdgpu) não está carregado ou não está "
        "exposto aqui.",
    "finding.ROCM_KFD_ACCESS.absent.next_action":
        "Carregue o driver (sudo modprobe amdgpu) ou, em um contêiner, passe --device=/dev/kfd "
        "--device=/dev/dri.",
    "finding.ROCM_KFD_ACCESS.no_access.summary":
        "/dev/kfd existe, mas este usuário não pode abri-lo.",
    "finding.ROCM_KFD_ACCESS.no_access.next_action":
        "Adicione o usuário aos grupos render e video (sudo usermod -aG render,video $USER) e "
        "depois faça login novamente; em um contêiner, passe também --group-add video.",
    "finding.ROCM_GFX_UNSUPPORTED.summary":
        "Este pacote ROCm não tem código para a arquitetura gfx desta GPU.",
    "finding.ROCM_GFX_UNSUPPORTED.next_action":
        "Instale um pacote ROCm que suporte esta GPU; para uma placa de consumo de arquitetura "
        "próxima, HSA_OVERRIDE_GFX_VERSION (por exemplo 11.0.0 para gfx110x) é a solução "
        "alternativa conhecida.",
    "finding.SLOW_FIRST_CALL.summary":
        "O primeiro cálculo levou {seconds} s: os kernels provavelmente foram compilados em "
        "tempo de execução (PTX) ou o dispositivo demorou a despertar.",
    "finding.SLOW_FIRST_CALL.next_action":
        "Execute a verificação novamente: se for rápida na segunda vez, era o cache JIT; instale "
        "um pacote com código nativo para esta GPU para evitar isso.",
    "finding.HOST_MEMORY_EXHAUSTED.summary":
        "O processo ficou sem memória do host (CPU): std::bad_alloc ou MemoryError.",
    "finding.HOST_MEMORY_EXHAUSTED.next_action":
        "Libere memória ou aumente o limite do processo: ulimit -v (espaço de endereços), o "
        "limite de memória do contêiner (docker run --memory), a memória pedida pelo job; só "
        "importar o torch precisa de cerca de 1 GB de espaço de endereços.",
    "finding.TOOL_ISOLATED_INSTALL.pipx.summary":
        "A verificação rodou no ambiente pipx da própria ferramenta, que não tem torch: ela não "
        "diz nada sobre o Python do seu projeto.",
    "finding.TOOL_ISOLATED_INSTALL.pipx.next_action":
        "Verifique o interpretador do seu projeto: kernodeck-diagnostic --python "
        "/caminho/do/projeto/bin/python (nada é instalado nele), ou rode o arquivo único com ele: "
        "/caminho/do/projeto/bin/python kernodeck-diagnostic-v1.pyz.",
    "finding.TOOL_ISOLATED_INSTALL.uv_tool.summary":
        "A verificação rodou no ambiente uv tool da própria ferramenta, que não tem torch: ela "
        "não diz nada sobre o Python do seu projeto.",
    "finding.TOOL_ISOLATED_INSTALL.uv_tool.next_action":
        "Verifique o interpretador do seu projeto: kernodeck-diagnostic --python "
        "/caminho/do/projeto/bin/python (nada é instalado nele), ou rode o arquivo único com ele: "
        "/caminho/do/projeto/bin/python kernodeck-diagnostic-v1.pyz.",
    "finding.TOOL_ISOLATED_INSTALL.venv.summary":
        "A verificação rodou no ambiente virtual que contém o comando kernodeck-diagnostic, e o "
        "torch não está instalado nele.",
    "finding.TOOL_ISOLATED_INSTALL.venv.next_action":
        "Se o seu projeto usa outro ambiente, verifique esse: kernodeck-diagnostic --python "
        "/caminho/do/projeto/bin/python, ou /caminho/do/projeto/bin/python -m "
        "kernodeck_diagnostic (com o pacote instalado lá), ou esse Python com o arquivo único. Se "
        "este é o ambiente do seu projeto, instale o torch nele.",

    # -- the tool's own sentences in error.message (error.message_key) -----------------------
    "error.backend_absent": "o pacote não declara nem CUDA nem HIP",
    "error.torch_shadowed":
        "'import torch' carregaria {module} (origem: {origin}), não um pacote PyTorch instalado: "
        "não foi importado",
    "error.torch_incomplete":
        "'import torch' deu um módulo sem {missing}: não é um PyTorch",
    "error.gpu_unavailable": "torch.cuda.is_available() é False",
    "error.gpu_unavailable.reason": "torch.cuda.is_available() é False: {reason}",
    "error.no_visible_device": "nenhum dispositivo visível",
    "error.no_visible_device.reason": "nenhum dispositivo visível: {reason}",
    "error.device_index_invalid": "índice de dispositivo {index} para {count} visíveis",
    "error.check_failed": "resultado errado: {what}",
    "error.no_verified_result": "o worker não relatou nenhum resultado verificado",
    "error.unreadable_log":
        "o registro de eventos do worker tinha {count} linha(s) ilegível(is) e nenhum resultado"
        " verificado",
    "error.timeout": "nenhum resultado em {seconds} s; o worker foi interrompido durante {at}",
    "error.timeout_at_start":
        "o interpretador não tinha iniciado em {seconds} s: ele trava na inicialização, ou inicia "
        "mais devagar do que o limite de tempo permite (um script intermediário, um sistema de "
        "arquivos lento, um hook de site)",
    "error.worker_ended.signal":
        "o worker foi encerrado pelo sinal {signal} durante {at}, sem resultado final",
    "error.worker_ended.exit":
        "o worker terminou com o código {code} durante {at}, sem resultado final",
    "error.worker_ended.status":
        "o worker terminou com o status {status} durante {at}, sem resultado final",
    "error.worker_ended.running":
        "o worker ainda estava em execução ao ser parado durante {at}, sem resultado final",
    "error.worker_ended.signal_stderr":
        "o worker foi encerrado pelo sinal {signal} durante {at}, sem resultado final; sua última "
        "linha no stderr: {stderr}",
    "error.worker_ended.exit_stderr":
        "o worker terminou com o código {code} durante {at}, sem resultado final; sua última "
        "linha no stderr: {stderr}",
    "error.worker_ended.status_stderr":
        "o worker terminou com o status {status} durante {at}, sem resultado final; sua última "
        "linha no stderr: {stderr}",
    "error.worker_ended.running_stderr":
        "o worker ainda estava em execução ao ser parado durante {at}, sem resultado final; sua "
        "última linha no stderr: {stderr}",
    "error.not_started.worker_missing":
        "o worker não pôde ser iniciado: o módulo do worker falta na instalação da própria "
        "ferramenta ({detail}); reinstale a ferramenta",
    "error.not_started.temp_folder":
        "o worker não pôde ser iniciado: nenhuma pasta temporária privada ({detail})",
    "error.not_started.temp_not_writable":
        "o worker não pôde ser iniciado: a pasta temporária não é gravável ({detail})",
    "error.not_started.interpreter":
        "o worker não pôde ser iniciado: o interpretador não pôde ser iniciado ({detail})",

    # -- terminal and markdown -------------------------------------------------------------------
    "ui.status.passed": "APROVADO",
    "ui.status.failed": "FALHOU",
    "ui.headline": "{status} {code} (código de saída {exit_code}) na etapa {stage}",
    "ui.headline.exit_as":
        "{status} {code} (código de saída {exit_code}, {exit_as}) na etapa {stage}",
    "ui.label.runtime": "plataforma",
    "ui.label.pytorch": "pytorch",
    "ui.label.gpu": "gpu",
    "ui.label.execution": "execução",
    "ui.label.host": "sistema",
    "ui.label.error": "erro",
    "ui.label.warning": "aviso",
    "ui.label.findings": "achados",
    "ui.label.next": "próxima ação",
    "ui.label.do": "ação",
    "ui.label.paths": "caminhos",
    "ui.runtime.unknown": "desconhecida (o processo de verificação não iniciou)",
    "ui.runtime.environment": "ambiente {kind}",
    "ui.pytorch.not_imported": "não importado",
    "ui.pytorch.unknown_version": "versão desconhecida",
    "ui.pytorch.distribution": "distribuição instalada {version}",
    "ui.gpu.not_queried": "não consultada no modo CPU",
    "ui.gpu.available": "disponível",
    "ui.gpu.not_available": "indisponível",
    "ui.gpu.visible": "visíveis: {count}",
    "ui.execution.not_reached": "não alcançada",
    "ui.execution.on": "em {device}",
    "ui.execution.product": "produto {state}",
    "ui.execution.gradient": "gradiente {state}",
    "ui.execution.verified": "ok",
    "ui.execution.not_verified": "NÃO verificado",
    "ui.execution.synchronized": "sincronizado",
    "ui.host.not_found": "{tool} não encontrado",
    "ui.host.timeout": "{tool} excedeu o tempo limite (3 s)",
    "ui.host.failed": "{tool} falhou",
    "ui.host.driver": "driver {version}",
    "ui.host.mig": "{count} dispositivo(s) MIG",
    "ui.error.at": "na etapa {where}: {what}",
    "ui.warning.during": "{category} durante {stage}: {message}",
    "ui.paths.interpreter": "interpretador {path}",
    "ui.paths.torch": "torch {path}",
    "ui.paths.note": "(mostrado apenas neste terminal, nunca salvo em um relatório)",
    "ui.live.interpreter": "iniciando o Python",
    "ui.live.import": "importando o torch",
    "ui.live.backend": "lendo o pacote",
    "ui.live.device": "consultando a GPU",
    "ui.live.compute": "calculando",
    "ui.severity.error": "erro",
    "ui.severity.warning": "alerta",
    "ui.severity.info": "info",
    "ui.markdown.headline":
        "**{status}** `{code}` (código de saída {exit_code}), etapa `{stage}`: {summary}",
    "ui.markdown.title": "Relatório do kernodeck-diagnostic",
    "ui.markdown.result": "Resultado",
    "ui.markdown.field": "Campo",
    "ui.markdown.value": "Valor",

    # -- the command line's own messages ---------------------------------------------------------
    "command.usage_error": "erro: {message} (consulte --help)",
    "cli.timeout.not_a_number": "não é um número de segundos: {value}",
    "arg.timeout.range": "deve estar entre {low} e {high} segundos, valor recebido: {value}",
    "cli.index.not_a_number": "não é um número inteiro: {value}",
    "arg.index.negative": "deve ser maior ou igual a 0, valor recebido: {value}",
    "cli.device.rocm":
        "{value} não é um modo de dispositivo: os pacotes ROCm e CUDA do PyTorch usam ambos o "
        "nome de dispositivo 'cuda', então use --device gpu (o padrão)",
    "arg.device.unknown": "deve ser gpu ou cpu, valor recebido: {value}",
    "api.argument": "check({parameter}=...): {reason}",
    "api.device.rocm":
        "{value} não é um modo de dispositivo: os pacotes ROCm e CUDA do PyTorch usam ambos o "
        "nome de dispositivo 'cuda', então use device='gpu' (o padrão)",
    "api.type.device": "check(device=...) recebe um str, 'gpu' ou 'cpu'; não {type}",
    "api.type.device_index": "check(device_index=...) recebe um int; não {type}",
    "api.type.timeout": "check(timeout=...) recebe segundos como int ou float; não {type}",
    "api.type.host_check": "check(host_check=...) recebe True ou False; não {type}",
    "api.type.python":
        "check(python=...) recebe o caminho do interpretador como str ou os.PathLike, ou None; "
        "não {type}",
    "arg.python.missing":
        "esse arquivo não existe; indique o caminho do interpretador (num ambiente "
        "virtual, bin/python, ou Scripts\\python.exe no Windows)",
    "arg.python.dangling":
        "é um link para um interpretador que não existe mais: o Python a partir do "
        "qual este ambiente virtual foi criado foi removido ou atualizado; crie o ambiente de "
        "novo",
    "arg.python.folder":
        "é uma pasta; indique o interpretador que ela contém (num ambiente virtual, "
        "bin/python, ou Scripts\\python.exe no Windows)",
    "arg.python.not_executable":
        "esse arquivo não é executável; indique o próprio interpretador (num ambiente "
        "virtual, bin/python)",
    "arg.python.not_runnable":
        "o sistema não consegue iniciar esse arquivo (um script cujo interpretador "
        "falta, ou um programa para outro sistema ou processador)",
    "arg.python.not_python":
        "esse programa não é um interpretador Python: ele rodou, mas não respondeu "
        "como um",
    "arg.python.too_old":
        "esse interpretador é Python {version}; o mínimo é {minimum}",
    "cli.output.dash":
        "--output - criaria um arquivo chamado '-': para o relatório JSON na saída padrão use "
        "--format json; para um arquivo chamado '-' de fato escreva ./-",
    "cli.output.preflight":
        "não é possível gravar o relatório no arquivo solicitado: {reason}. Nada foi executado "
        "(código de saída {exit}).",
    "cli.output.not_saved":
        "o relatório NÃO foi salvo: {reason} (código de saída {exit}, OUTPUT_WRITE_FAILED).",
    "cli.stdout.saved":
        "o relatório foi salvo no arquivo solicitado, mas não pôde ser escrito na saída padrão: "
        "{reason} (código de saída {exit}, {code}).",
    "cli.stdout.lost":
        "o resultado não pôde ser escrito na saída padrão: {reason} (código de saída {exit}, "
        "{code}).",
    "output.reason.empty": "o nome do arquivo está vazio",
    "output.reason.exists_file": "já existe um arquivo com esse nome; ele nunca é sobrescrito",
    "output.reason.exists_link":
        "já existe um link simbólico com esse nome; ele nunca é sobrescrito",
    "output.reason.exists_folder": "já existe uma pasta com esse nome",
    "output.reason.exists_device":
        "esse nome é um dispositivo, não um arquivo comum; o relatório só é gravado em um "
        "arquivo novo",
    "output.reason.exists_fifo":
        "esse nome é um pipe nomeado (FIFO), não um arquivo comum; o relatório só é gravado em "
        "um arquivo novo",
    "output.reason.exists_socket":
        "esse nome é um socket, não um arquivo comum; o relatório só é gravado em um arquivo novo",
    "output.reason.no_folder": "a pasta do arquivo não existe",
    "output.reason.not_a_folder": "a pasta do arquivo não é uma pasta",
    "output.reason.not_writable": "a pasta do arquivo não permite escrita",
    "output.reason.name_too_long": "o nome do arquivo é longo demais",
    "output.reason.permission": "permissão negada",
    "output.reason.no_space": "não há espaço disponível no dispositivo",
    "output.reason.too_large":
        "o arquivo é maior do que o permitido (limite de tamanho de arquivo)",
    "output.reason.quota": "cota de disco excedida",
    "output.reason.read_only": "o sistema de arquivos é somente leitura",
    "output.reason.loop": "níveis demais de links simbólicos",
    "output.reason.nul":
        "o nome do arquivo contém um caractere NUL",
    "output.reason.trailing_separator":
        "o nome termina com um separador de pasta: indique um nome de arquivo",
    "output.reason.unencodable":
        "o nome do arquivo não pode ser codificado para este sistema de arquivos",
    "output.reason.no_folder_tilde":
        "a pasta dele não existe (um ~ no início não é a sua pasta pessoal aqui: o shell não o "
        "expandiu; escreva o caminho completo)",
    "output.reason.closed": "ela está fechada",
    "output.reason.other": "o sistema recusou a gravação ({detail})",
    "check.interrupted":
        "interrompido por {signal}; a verificação foi parada e nenhum relatório foi gravado.",
    # -- todos os comandos (a verificação, compare, summarize) -----------------------------------
    "command.interrupted": "interrompido por {signal}.",
    "command.internal_error":
        "erro interno ({detail}); relate o problema informando o comando executado.",
    "command.help.debug": "mostra um traceback se a própria ferramenta falhar",

    # -- compare and summarize (reports read back; JSON output keeps ids, not these texts) -------
    "reports.reason.not_found": "não encontrado",
    "reports.reason.not_a_file": "não é um arquivo comum",
    "reports.reason.permission": "permissão negada",
    "reports.reason.unreadable": "não pode ser lido",
    "reports.reason.not_json": "não é JSON",
    "reports.reason.schema_version":
        "versão de esquema {version} (esta versão da ferramenta lê a versão 1)",
    "reports.reason.not_a_report": "não é um relatório",
    "reports.reason.too_large": "grande demais para ser um relatório (mais de {limit})",
    "reports.help.format":
        "formato de saída: text (padrão), json ou markdown (para colar em uma issue)",
    "reports.help.lang": "idioma da saída em texto e markdown (padrão aqui: {default})",
    "compare.help.description":
        "Mostra o que mudou entre dois relatórios da verificação: código, etapa, versões, "
        "dispositivos, achados e tempos por etapa (um tempo conta quando variou 100 ms e 20 por "
        "cento ou mais). Sai com 0 quando os dois têm o mesmo código, 1 quando o código mudou, 2 "
        "quando um arquivo não é um relatório legível.",
    "compare.help.a": "o relatório anterior (o JSON gravado com --output)",
    "compare.help.b": "o relatório posterior",
    "compare.argument": "{which} ({name}): {reason}",
    "compare.cannot_read": "impossível comparar: {what}",
    "compare.same_code": "mesmo código: {code}",
    "compare.code_changed": "o código mudou: {a} -> {b}",
    "compare.nothing_else": "nada mais mudou",
    "compare.header.field": "campo",
    "compare.findings_added": "achados novos em B: {ids}",
    "compare.findings_removed": "achados que sumiram em B: {ids}",
    "summarize.help.description":
        "Resume muitos relatórios da verificação, por exemplo coletados em várias máquinas: uma "
        "linha por relatório, depois a contagem de cada código, do pior ao melhor, e por fim os "
        "arquivos que não são relatórios legíveis, com o motivo.",
    "summarize.help.paths": "um arquivo de relatório, ou uma pasta percorrida em busca de *.json",
    "summarize.help.epilog":
        "Ordem dos códigos, do pior ao melhor: {order}. Sai com 0 quando todos os relatórios "
        "foram aprovados e todos os arquivos puderam ser lidos, 1 quando um relatório falhou ou "
        "um arquivo não pôde ser lido, 2 em caso de erro de uso ou quando nenhum relatório "
        "legível foi encontrado.",
    "summarize.header.report": "relatório",
    "summarize.header.code": "código",
    "summarize.header.exit": "saída",
    "summarize.header.stage": "etapa",
    "summarize.header.python": "python",
    "summarize.header.torch": "torch",
    "summarize.header.backend": "backend",
    "summarize.header.devices": "dispositivos",
    "summarize.header.count": "quantidade",
    "summarize.counts": "contagem por código, do pior ao melhor",
    "summarize.unreadable": "ilegíveis ({count})",
    "summarize.total":
        "{files} arquivo(s): {reports} relatório(s), {passed} aprovado(s), {failed} com falha, "
        "{unreadable} ilegível(is)",
    "summarize.nothing_found": "nenhum arquivo para ler nos caminhos indicados",
}
