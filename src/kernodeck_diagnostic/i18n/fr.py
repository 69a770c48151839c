"""French messages: the same keys and placeholders as the English catalog (en.py)."""

from __future__ import annotations

INSTALL = ("python -m pip install --force-reinstall torch --index-url "
           "https://download.pytorch.org/whl/cu128 (NVIDIA ; choisissez la version CUDA prise en "
           "charge par votre pilote) ou --index-url https://download.pytorch.org/whl/rocm6.4 "
           "(AMD)")

MESSAGES = {
    # -- result codes ----------------------------------------------------------------------------
    "code.GPU_CHECK_PASSED.summary": "Produit et gradient vérifiés sur le GPU choisi.",
    "code.GPU_CHECK_PASSED.next_action": "Passez à une petite entrée de votre application.",
    "code.CPU_CHECK_PASSED.summary": "Produit et gradient vérifiés sur le CPU uniquement.",
    "code.CPU_CHECK_PASSED.next_action":
        "Ne concluez rien sur CUDA ou ROCm : lancez sans --device cpu pour vérifier le GPU.",
    "code.INTERNAL_ERROR.summary": "Le diagnostic lui-même a échoué (un bogue de l'outil).",
    "code.INTERNAL_ERROR.next_action": "Signalez-le en indiquant la commande exécutée.",
    "code.USAGE_ERROR.summary": "Arguments invalides.",
    "code.USAGE_ERROR.next_action": "Lisez le message d'une ligne, puis consultez --help.",
    "code.TORCH_MISSING.summary": "PyTorch n'est pas installé dans ce Python.",
    "code.TORCH_MISSING.next_action":
        "Vérifiez quel interpréteur exécute votre projet, puis installez-y PyTorch.",
    "code.TORCH_IMPORT_FAILED.summary": "import torch a échoué.",
    "code.TORCH_IMPORT_FAILED.next_action":
        "Vérifiez l'interpréteur, le paquet PyTorch et ses dépendances.",
    "code.GPU_BACKEND_ABSENT.summary":
        "Ce paquet PyTorch ne déclare ni CUDA ni HIP (un paquet CPU uniquement).",
    "code.GPU_BACKEND_ABSENT.next_action":
        "Installez le paquet PyTorch adapté à votre GPU (CUDA ou ROCm).",
    "code.GPU_UNAVAILABLE.summary": "Le GPU n'est pas utilisable depuis ce processus.",
    "code.GPU_UNAVAILABLE.next_action":
        "Vérifiez l'exposition de la carte à ce processus, le pilote et les permissions.",
    "code.DEVICE_INDEX_INVALID.summary":
        "L'index de périphérique est en dehors des périphériques visibles.",
    "code.DEVICE_INDEX_INVALID.next_action":
        "Demandez un index inférieur au nombre de périphériques visibles.",
    "code.CHECK_FAILED.summary": "Le calcul fixe a donné un résultat faux.",
    "code.CHECK_FAILED.next_action": "Lisez l'étape signalée avant de lancer le modèle complet.",
    "code.OUT_OF_MEMORY.summary":
        "L'allocation sur le périphérique a échoué : mémoire insuffisante.",
    "code.OUT_OF_MEMORY.next_action":
        "Lisez l'étape signalée ; vérifiez ce qui occupe d'autre de la mémoire sur ce "
        "périphérique.",
    "code.RUNTIME_ERROR.summary": "Une opération du backend a échoué.",
    "code.RUNTIME_ERROR.next_action":
        "Lisez l'étape signalée et l'erreur avant de lancer le modèle complet.",
    "code.TIMEOUT.summary": "La vérification a été arrêtée par la limite de temps.",
    "code.TIMEOUT.next_action":
        "Traitez le contrôle comme un échec ; examinez l'environnement à l'étape indiquée.",
    "code.WORKER_FAILED.summary": "La vérification s'est terminée sans rapport exploitable.",
    "code.WORKER_FAILED.next_action":
        "Traitez le contrôle comme un échec ; examinez l'environnement à l'étape indiquée.",
    "code.OUTPUT_WRITE_FAILED.summary": "Le rapport n'a pas été enregistré à l'endroit demandé.",
    "code.OUTPUT_WRITE_FAILED.next_action":
        "Utilisez un nouveau nom de fichier dans un dossier où vous pouvez écrire.",
    "code.STDOUT_WRITE_FAILED.summary":
        "Le résultat n'a pas pu être écrit sur la sortie standard.",
    "code.STDOUT_WRITE_FAILED.next_action":
        "Envoyez la sortie standard vers un terminal, un tube ou un fichier qui a de la place ; "
        "gardez le rapport avec --output.",
    "code.INTERRUPTED.summary":
        "Arrêté par un signal : Ctrl-C (SIGINT), SIGTERM ou SIGHUP (le terminal a été fermé).",
    "code.INTERRUPTED.next_action": "Relancez-la le moment venu.",

    # -- findings ---------------------------------------------------------------------------------
    "finding.CPU_ONLY_BUILD.summary":
        "Le PyTorch installé est un paquet CPU uniquement : il ne peut utiliser aucun GPU.",
    "finding.CPU_ONLY_BUILD.next_action":
        "Installez un paquet GPU dans cet interpréteur : " + INSTALL + ".",
    "finding.NVIDIA_DRIVER_MISSING.summary":
        "Aucun pilote NVIDIA n'est accessible depuis ce processus (aucun n'est installé, ou le "
        "conteneur a été démarré sans le runtime GPU).",
    "finding.NVIDIA_DRIVER_MISSING.next_action":
        "Sur un hôte : installez le pilote NVIDIA (nvidia-smi doit fonctionner). Dans un "
        "conteneur : démarrez-le avec le runtime GPU, par exemple docker run --gpus all (NVIDIA "
        "Container Toolkit).",
    "finding.BUILD_FOR_OTHER_VENDOR.amd.summary":
        "Ce PyTorch est un paquet CUDA, pour les GPU NVIDIA, mais le GPU de cette machine est un "
        "AMD : le paquet ne peut pas l'utiliser.",
    "finding.BUILD_FOR_OTHER_VENDOR.amd.next_action":
        "Installez un paquet ROCm pour le GPU AMD : python -m pip install --force-reinstall torch "
        "--index-url https://download.pytorch.org/whl/rocm6.4 (choisissez la version ROCm prise en "
        "charge par votre pilote).",
    "finding.BUILD_FOR_OTHER_VENDOR.nvidia.summary":
        "Ce PyTorch est un paquet ROCm, pour les GPU AMD, mais le GPU de cette machine est un "
        "NVIDIA : le paquet ne peut pas l'utiliser.",
    "finding.BUILD_FOR_OTHER_VENDOR.nvidia.next_action":
        "Installez un paquet CUDA pour le GPU NVIDIA : python -m pip install --force-reinstall "
        "torch --index-url https://download.pytorch.org/whl/cu128 (choisissez la version CUDA "
        "prise en charge par votre pilote).",
    "finding.DRIVER_TOO_OLD.summary":
        "Le pilote NVIDIA est trop ancien pour ce paquet PyTorch (CUDA {build}).",
    "finding.DRIVER_TOO_OLD.next_action":
        "Mettez à jour le pilote (au moins {minimum} sous Linux pour CUDA {major}.x), ou "
        "installez un paquet torch pour la version de CUDA que le pilote prend en charge, par "
        "exemple --index-url https://download.pytorch.org/whl/cu126.",
    "finding.DRIVER_TOO_OLD.forward_compat.summary":
        "Le pilote NVIDIA ({driver}) est plus ancien que ce qu'exige CUDA {major}.x ({minimum}), "
        "et il a pourtant exécuté ce paquet CUDA {build} : un paquet de compatibilité ascendante "
        "de CUDA (cuda-compat, comme dans les conteneurs NGC) est utilisé.",
    "finding.DRIVER_TOO_OLD.forward_compat.next_action":
        "Rien à corriger pour cette vérification. La compatibilité ascendante ne fonctionne que "
        "sur les GPU de centre de données (et quelques cartes RTX certifiées et cartes Jetson), et "
        "seulement avec le paquet cuda-compat qui correspond au paquet torch ; pour s'en passer, "
        "mettez à jour le pilote (au moins {minimum}).",
    "finding.ARCH_NOT_IN_BUILD.summary":
        "Ce paquet PyTorch ne contient pas de code pour l'architecture de ce GPU.",
    "finding.ARCH_NOT_IN_BUILD.next_action":
        "Installez un paquet dont torch.cuda.get_arch_list() contient le sm_XY de ce GPU (les GPU "
        "récents exigent des paquets CUDA récents, par exemple --index-url "
        "https://download.pytorch.org/whl/cu128 pour Blackwell), ou compilez PyTorch avec "
        "TORCH_CUDA_ARCH_LIST défini pour ce GPU.",
    "finding.ARCH_PTX_ONLY.summary":
        "Ce GPU n'exécute PyTorch que par du PTX compilé à la volée : les premiers appels sont "
        "lents.",
    "finding.ARCH_PTX_ONLY.next_action":
        "Installez un paquet avec du code natif (sm_XY) pour ce GPU ; en attendant, conservez le "
        "cache JIT (CUDA_CACHE_MAXSIZE, ~/.nv/ComputeCache) entre les exécutions.",
    "finding.DEVICES_HIDDEN.summary":
        "Une variable de visibilité des périphériques masque tous les GPU à ce processus.",
    "finding.DEVICES_HIDDEN.next_action":
        "Supprimez-la (unset {variable}) ou listez les GPU à utiliser, par exemple {variable}=0.",
    "finding.FABRIC_MANAGER_NOT_READY.summary":
        "Les GPU ne sont pas prêts : sur les systèmes NVSwitch, le Fabric Manager n'est pas en "
        "cours d'exécution (CUDA 802).",
    "finding.FABRIC_MANAGER_NOT_READY.next_action":
        "Démarrez-le, dans la version exacte du pilote : sudo systemctl enable --now "
        "nvidia-fabricmanager ; puis vérifiez systemctl status nvidia-fabricmanager.",
    "finding.DRIVER_LIBRARY_MISMATCH.summary":
        "Le pilote du noyau et la bibliothèque du pilote en espace utilisateur (libcuda) ont des "
        "versions différentes (CUDA 803).",
    "finding.DRIVER_LIBRARY_MISMATCH.next_action":
        "Redémarrez après une mise à jour du pilote, ou réinstallez le pilote pour que les deux "
        "correspondent ; dans un conteneur, n'incluez pas libcuda dans l'image (laissez le "
        "runtime GPU monter celle de l'hôte).",
    "finding.FORWARD_COMPAT_UNSUPPORTED.summary":
        "Une bibliothèque CUDA de compatibilité future (forward compatibility) est utilisée sur "
        "un GPU qui ne la prend pas en charge (CUDA 804).",
    "finding.FORWARD_COMPAT_UNSUPPORTED.next_action":
        "Retirez les bibliothèques cuda-compat de LD_LIBRARY_PATH (ou de l'image), ou mettez à "
        "jour le pilote pour qu'il prenne directement en charge le CUDA de ce paquet.",
    "finding.CUDA_UNKNOWN_ERROR.summary":
        "Le pilote CUDA signale une erreur inconnue (999), souvent après une mise en veille "
        "suivie d'une reprise.",
    "finding.CUDA_UNKNOWN_ERROR.next_action":
        "Rechargez le module de mémoire unifiée (sudo rmmod nvidia_uvm && sudo modprobe "
        "nvidia_uvm) ou redémarrez ; puis relancez la vérification.",
    "finding.MIG_SLICE.summary":
        "Une partition MIG est utilisée : elle dispose d'une fraction de la mémoire et de la "
        "puissance de calcul du GPU.",
    "finding.MIG_SLICE.next_action":
        "Dimensionnez votre travail pour la partition, pas pour la carte entière ; pour cibler "
        "une partition, mettez dans CUDA_VISIBLE_DEVICES son UUID donné par nvidia-smi -L.",
    "finding.NUMPY_MISSING.summary":
        "NumPy n'est pas installé à côté de torch : tensor.numpy() et la plupart des chargements "
        "de données échoueront.",
    "finding.NUMPY_MISSING.next_action": "python -m pip install numpy (avec le même interpréteur).",
    "finding.NUMPY_ABI_MISMATCH.summary":
        "La version de NumPy ne correspond pas à celle avec laquelle ce torch (ou une extension) "
        "a été compilé.",
    "finding.NUMPY_ABI_MISMATCH.next_action":
        'python -m pip install "numpy<2" pour un paquet compilé avec NumPy 1.x, ou mettez à '
        "jour torch et l'extension vers des paquets conçus pour NumPy 2.",
    "finding.WARNING_AS_ERROR.summary":
        "Les filtres d'avertissements de l'interpréteur changent les avertissements en erreurs, "
        "et un {category} a arrêté la vérification : votre programme échoue de la même façon "
        "lancé ainsi.",
    "finding.WARNING_AS_ERROR.next_action":
        "Retirez -W error (ou PYTHONWARNINGS=error) pour ce programme, ou laissez passer cet "
        "avertissement avec un filtre ignore placé après : -W error -W ignore::{category} "
        "(PYTHONWARNINGS=error,ignore::{category}), en nommant son module si possible.",
    "finding.TORCH_SHADOWED.local_file.summary":
        "'import torch' chargerait {module} au lieu d'un paquet PyTorch installé.",
    "finding.TORCH_SHADOWED.local_file.next_action":
        "Renommez {module} (par exemple un script à vous en torch_demo.py) ou sortez-le de ce "
        "dossier, et supprimez le dossier __pycache__ à côté ; ou lancez votre programme depuis "
        "un autre dossier.",
    "finding.TORCH_SHADOWED.local_folder.summary":
        "'import torch' chargerait le dossier {module} au lieu d'un paquet PyTorch installé.",
    "finding.TORCH_SHADOWED.local_folder.next_action":
        "Renommez le dossier {module} (ou déplacez-le), ou lancez votre programme depuis un autre "
        "dossier.",
    "finding.TORCH_SHADOWED.checkout.summary":
        "'import torch' chargerait le dossier torch/ d'une copie des sources de PyTorch, non "
        "compilée ici, au lieu d'un paquet PyTorch installé.",
    "finding.TORCH_SHADOWED.checkout.next_action":
        "Lancez votre programme depuis un autre dossier (cd ..), ou compilez et installez ces "
        "sources dans cet interpréteur (python -m pip install -e . -v --no-build-isolation).",
    "finding.TORCH_SHADOWED.pythonpath.summary":
        "'import torch' chargerait {module} depuis un dossier de PYTHONPATH au lieu d'un paquet "
        "PyTorch installé.",
    "finding.TORCH_SHADOWED.pythonpath.next_action":
        "Retirez ce dossier de PYTHONPATH (ou supprimez PYTHONPATH), ou renommez-y {module} ; "
        "--show-paths affiche où il se trouve, sur votre terminal seulement.",
    "finding.TORCH_SHADOWED.stray.summary":
        "'import torch' chargerait {module}, une copie égarée, au lieu d'un paquet PyTorch "
        "installé.",
    "finding.TORCH_SHADOWED.stray.next_action":
        "Supprimez {module} égaré (--show-paths affiche où il se trouve, sur votre terminal "
        "seulement), puis réinstallez PyTorch : python -m pip install --force-reinstall torch.",
    "finding.LOCAL_MODULE_SHADOWS.summary":
        "Des modules du dossier d'où part votre programme masquent des modules dont il a "
        "besoin : {names}.",
    "finding.LOCAL_MODULE_SHADOWS.next_action":
        "Renommez-les (et supprimez le dossier __pycache__ à côté), ou lancez votre programme "
        "depuis un autre dossier : python app.py y importe ceux-là au lieu de ceux de la "
        "bibliothèque standard ou de torch.",
    "finding.TORCH_DUPLICATE_INSTALL.summary":
        "Plusieurs installations de PyTorch sont visibles pour cet interpréteur ; celle qui est "
        "importée n'est peut-être pas celle que vous avez installée.",
    "finding.TORCH_DUPLICATE_INSTALL.next_action":
        "Lancez python -m pip uninstall torch jusqu'à ce que pip dise que torch n'est pas installé "
        "(chaque passage retire la première installation du chemin, celle du site-packages de "
        "l'utilisateur aussi ; une copie que pip ne touche pas, sur PYTHONPATH par exemple, s'en "
        "va quand on retire son dossier du chemin), puis installez un seul paquet.",
    "finding.SHARED_LIBRARY_MISSING.driver.summary":
        "import torch a besoin de {library}, une bibliothèque du pilote NVIDIA, qui est "
        "introuvable.",
    "finding.SHARED_LIBRARY_MISSING.driver.next_action":
        "{library} est fournie par le pilote NVIDIA, jamais par un paquet Python (réinstaller "
        "torch ne la ramène pas) : sur un hôte, installez le pilote (nvidia-smi doit fonctionner) "
        "; dans un conteneur, démarrez-le avec le runtime GPU (docker run --gpus all, NVIDIA "
        "Container Toolkit), qui monte les bibliothèques du pilote de l'hôte.",
    "finding.SHARED_LIBRARY_MISSING.cuda.summary":
        "import torch a besoin de {library}, qui est introuvable.",
    "finding.SHARED_LIBRARY_MISSING.cuda.next_action":
        "Restaurez {library} : elle est fournie par les wheels nvidia-* dont dépend torch : "
        "python -m pip install --force-reinstall torch. Vérifiez aussi que LD_LIBRARY_PATH ne "
        "pointe pas ailleurs.",
    "finding.SHARED_LIBRARY_MISSING.system.summary":
        "import torch a besoin de {library}, qui est introuvable.",
    "finding.SHARED_LIBRARY_MISSING.system.next_action":
        "Restaurez {library} : réinstallez torch (python -m pip install --force-reinstall "
        "torch) ; si la bibliothèque appartient au système, installez-la avec le gestionnaire "
        "de paquets du système. Vérifiez aussi que LD_LIBRARY_PATH ne pointe pas ailleurs.",
    "finding.UNDEFINED_SYMBOL.summary":
        "{library} ne correspond pas au code qui la charge (symbole non défini {symbol}) : deux "
        "paquets différents sont mélangés.",
    "finding.UNDEFINED_SYMBOL.next_action":
        "Retirez la variable LD_LIBRARY_PATH (elle pointe souvent vers un autre CUDA ou cuDNN), "
        "puis réinstallez torch et ses extensions depuis un seul index.",
    "finding.LIBRARY_PATH_OVERRIDE.variable.summary":
        "Un dossier de {variable} fournit une {library} que ce torch ne peut pas charger "
        "(mauvaise version, fichier vide ou abîmé, ou fait pour une autre architecture).",
    "finding.LIBRARY_PATH_OVERRIDE.variable.next_action":
        "Retirez {variable} pour ce programme, ou ôtez-en ce dossier ; env -u {variable} "
        "python app.py le confirme.",
    "finding.LIBRARY_PATH_OVERRIDE.conda.summary":
        "Le dossier lib de l'environnement conda actif fournit une {library} que ce torch ne peut "
        "pas charger (souvent une libstdc++ plus ancienne que celle dont torch a besoin).",
    "finding.LIBRARY_PATH_OVERRIDE.conda.next_action":
        "Mettez cette bibliothèque à jour dans l'environnement (pour libstdc++ : conda install -c "
        "conda-forge libstdcxx-ng), ou lancez le programme depuis un environnement dont les "
        "bibliothèques vont avec torch.",
    "finding.WINDOWS_DLL_LOAD_FAILED.summary":
        "Windows n'a pas pu charger {dll} ou l'une de ses dépendances.",
    "finding.WINDOWS_DLL_LOAD_FAILED.next_action":
        "Installez la dernière version de Microsoft Visual C++ Redistributable (x64), puis "
        "réinstallez torch (python -m pip install --force-reinstall torch).",
    "finding.ROCM_KFD_ACCESS.absent.summary":
        "/dev/kfd est absent : le pilote GPU AMD (amdgpu) n'est pas chargé ou n'est pas exposé "
        "ici.",
    "finding.ROCM_KFD_ACCESS.absent.next_action":
        "Chargez le pilote (sudo modprobe amdgpu) ou, dans un conteneur, passez "
        "--device=/dev/kfd --device=/dev/dri.",
    "finding.ROCM_KFD_ACCESS.no_access.summary":
        "/dev/kfd existe, mais cet utilisateur ne peut pas l'ouvrir.",
    "finding.ROCM_KFD_ACCESS.no_access.next_action":
        "Ajoutez l'utilisateur aux groupes render et video (sudo usermod -aG render,video "
        "$USER), puis reconnectez-vous ; dans un conteneur, passez aussi --group-add video.",
    "finding.ROCM_GFX_UNSUPPORTED.summary":
        "Ce paquet ROCm ne contient pas de code pour l'architecture gfx de ce GPU.",
    "finding.ROCM_GFX_UNSUPPORTED.next_action":
        "Installez un paquet ROCm qui prend en charge ce GPU ; pour une carte grand public "
        "d'architecture proche, HSA_OVERRIDE_GFX_VERSION (par exemple 11.0.0 pour gfx110x) est "
        "le contournement connu.",
    "finding.SLOW_FIRST_CALL.summary":
        "Le premier calcul a pris {seconds} s : les kernels ont probablement été compilés à la "
        "volée (PTX) ou le périphérique a mis du temps à se réveiller.",
    "finding.SLOW_FIRST_CALL.next_action":
        "Relancez la vérification : si elle est rapide la deuxième fois, c'était le cache JIT ; "
        "installez un paquet avec du code natif pour ce GPU pour l'éviter.",
    "finding.HOST_MEMORY_EXHAUSTED.summary":
        "Le processus a manqué de mémoire hôte (CPU) : std::bad_alloc ou MemoryError.",
    "finding.HOST_MEMORY_EXHAUSTED.next_action":
        "Libérez de la mémoire ou relevez la limite du processus : ulimit -v (espace d'adressage), "
        "la limite mémoire du conteneur (docker run --memory), la mémoire demandée par le job ; "
        "importer torch seul demande environ 1 Go d'espace d'adressage.",
    "finding.TOOL_ISOLATED_INSTALL.pipx.summary":
        "La vérification a tourné dans l'environnement pipx propre à l'outil, qui n'a pas torch : "
        "elle ne dit rien du Python de votre projet.",
    "finding.TOOL_ISOLATED_INSTALL.pipx.next_action":
        "Vérifiez plutôt l'interpréteur de votre projet : kernodeck-diagnostic --python "
        "/chemin/du/projet/bin/python (rien n'y est installé), ou lancez le fichier unique avec "
        "lui : /chemin/du/projet/bin/python kernodeck-diagnostic-v1.pyz.",
    "finding.TOOL_ISOLATED_INSTALL.uv_tool.summary":
        "La vérification a tourné dans l'environnement uv tool propre à l'outil, qui n'a pas "
        "torch : elle ne dit rien du Python de votre projet.",
    "finding.TOOL_ISOLATED_INSTALL.uv_tool.next_action":
        "Vérifiez plutôt l'interpréteur de votre projet : kernodeck-diagnostic --python "
        "/chemin/du/projet/bin/python (rien n'y est installé), ou lancez le fichier unique avec "
        "lui : /chemin/du/projet/bin/python kernodeck-diagnostic-v1.pyz.",
    "finding.TOOL_ISOLATED_INSTALL.venv.summary":
        "La vérification a tourné dans l'environnement virtuel qui contient la commande "
        "kernodeck-diagnostic, et torch n'y est pas installé.",
    "finding.TOOL_ISOLATED_INSTALL.venv.next_action":
        "Si votre projet utilise un autre environnement, vérifiez celui-là : kernodeck-diagnostic "
        "--python /chemin/du/projet/bin/python, ou /chemin/du/projet/bin/python -m "
        "kernodeck_diagnostic (avec le paquet installé là), ou ce Python avec le fichier unique. "
        "Si c'est l'environnement de votre projet, installez-y torch.",

    # -- the tool's own sentences in error.message (error.message_key) -----------------------
    "error.backend_absent": "le paquet ne déclare ni CUDA ni HIP",
    "error.torch_shadowed":
        "'import torch' chargerait {module} (origine : {origin}), pas un paquet PyTorch "
        "installé : il n'a pas été importé",
    "error.torch_incomplete":
        "'import torch' a donné un module sans {missing} : pas un PyTorch",
    "error.gpu_unavailable": "torch.cuda.is_available() vaut False",
    "error.gpu_unavailable.reason": "torch.cuda.is_available() vaut False : {reason}",
    "error.no_visible_device": "aucun périphérique visible",
    "error.no_visible_device.reason": "aucun périphérique visible : {reason}",
    "error.device_index_invalid": "index de périphérique {index} pour {count} visibles",
    "error.check_failed": "résultat faux : {what}",
    "error.no_verified_result": "le worker n'a rapporté aucun résultat vérifié",
    "error.unreadable_log":
        "le journal d'événements du worker contenait {count} ligne(s) illisible(s) et aucun "
        "résultat vérifié",
    "error.timeout": "aucun résultat en {seconds} s ; le worker a été arrêté pendant {at}",
    "error.timeout_at_start":
        "l'interpréteur n'avait pas démarré en {seconds} s : il se bloque au démarrage, ou démarre "
        "plus lentement que la limite de temps ne le permet (un script intermédiaire, un système "
        "de fichiers lent, un hook de site)",
    "error.worker_ended.signal":
        "le worker a été tué par le signal {signal} pendant {at}, sans résultat final",
    "error.worker_ended.exit":
        "le worker s'est terminé avec le code {code} pendant {at}, sans résultat final",
    "error.worker_ended.status":
        "le worker s'est terminé avec le statut {status} pendant {at}, sans résultat final",
    "error.worker_ended.running":
        "le worker tournait encore à son arrêt pendant {at}, sans résultat final",
    "error.worker_ended.signal_stderr":
        "le worker a été tué par le signal {signal} pendant {at}, sans résultat final ; sa "
        "dernière ligne sur stderr : {stderr}",
    "error.worker_ended.exit_stderr":
        "le worker s'est terminé avec le code {code} pendant {at}, sans résultat final ; sa "
        "dernière ligne sur stderr : {stderr}",
    "error.worker_ended.status_stderr":
        "le worker s'est terminé avec le statut {status} pendant {at}, sans résultat final ; sa "
        "dernière ligne sur stderr : {stderr}",
    "error.worker_ended.running_stderr":
        "le worker tournait encore à son arrêt pendant {at}, sans résultat final ; sa dernière "
        "ligne sur stderr : {stderr}",
    "error.not_started.worker_missing":
        "le worker n'a pas pu démarrer : le module du worker manque à l'installation de l'outil "
        "lui-même ({detail}) ; réinstallez l'outil",
    "error.not_started.temp_folder":
        "le worker n'a pas pu démarrer : aucun dossier temporaire privé ({detail})",
    "error.not_started.temp_not_writable":
        "le worker n'a pas pu démarrer : le dossier temporaire n'est pas accessible en écriture"
        " ({detail})",
    "error.not_started.interpreter":
        "le worker n'a pas pu démarrer : l'interpréteur n'a pas pu démarrer ({detail})",

    # -- terminal and markdown -------------------------------------------------------------------
    "ui.status.passed": "RÉUSSI",
    "ui.status.failed": "ÉCHEC",
    "ui.headline": "{status} {code} (code de sortie {exit_code}) à l'étape {stage}",
    "ui.headline.exit_as":
        "{status} {code} (code de sortie {exit_code}, {exit_as}) à l'étape {stage}",
    "ui.label.runtime": "plateforme",
    "ui.label.pytorch": "pytorch",
    "ui.label.gpu": "gpu",
    "ui.label.execution": "exécution",
    "ui.label.host": "système",
    "ui.label.error": "erreur",
    "ui.label.warning": "avertissement",
    "ui.label.findings": "constats",
    "ui.label.next": "prochaine action",
    "ui.label.do": "à faire",
    "ui.label.paths": "chemins",
    "ui.runtime.unknown": "inconnue (le processus de vérification n'a pas démarré)",
    "ui.runtime.environment": "environnement {kind}",
    "ui.pytorch.not_imported": "non importé",
    "ui.pytorch.unknown_version": "version inconnue",
    "ui.pytorch.distribution": "distribution installée {version}",
    "ui.gpu.not_queried": "non interrogé en mode CPU",
    "ui.gpu.available": "disponible",
    "ui.gpu.not_available": "indisponible",
    "ui.gpu.visible": "visibles : {count}",
    "ui.execution.not_reached": "non atteinte",
    "ui.execution.on": "sur {device}",
    "ui.execution.product": "produit {state}",
    "ui.execution.gradient": "gradient {state}",
    "ui.execution.verified": "ok",
    "ui.execution.not_verified": "NON vérifié",
    "ui.execution.synchronized": "synchronisé",
    "ui.host.not_found": "{tool} introuvable",
    "ui.host.timeout": "{tool} a dépassé le délai (3 s)",
    "ui.host.failed": "{tool} a échoué",
    "ui.host.driver": "pilote {version}",
    "ui.host.mig": "{count} périphérique(s) MIG",
    "ui.error.at": "à l'étape {where} : {what}",
    "ui.warning.during": "{category} pendant {stage} : {message}",
    "ui.paths.interpreter": "interpréteur {path}",
    "ui.paths.torch": "torch {path}",
    "ui.paths.note": "(affiché sur ce terminal uniquement, jamais enregistré dans un rapport)",
    "ui.live.interpreter": "démarrage de Python",
    "ui.live.import": "import de torch",
    "ui.live.backend": "lecture du paquet",
    "ui.live.device": "interrogation du GPU",
    "ui.live.compute": "calcul",
    "ui.severity.error": "erreur",
    "ui.severity.warning": "alerte",
    "ui.severity.info": "info",
    "ui.markdown.headline":
        "**{status}** `{code}` (code de sortie {exit_code}), étape `{stage}` : {summary}",
    "ui.markdown.title": "Rapport kernodeck-diagnostic",
    "ui.markdown.result": "Résultat",
    "ui.markdown.field": "Champ",
    "ui.markdown.value": "Valeur",

    # -- the command line's own messages ---------------------------------------------------------
    "command.usage_error": "erreur: {message} (voir --help)",
    "cli.timeout.not_a_number": "n'est pas un nombre de secondes : {value}",
    "arg.timeout.range":
        "doit être compris entre {low} et {high} secondes, valeur reçue : {value}",
    "cli.index.not_a_number": "n'est pas un nombre entier : {value}",
    "arg.index.negative": "doit être supérieur ou égal à 0, valeur reçue : {value}",
    "cli.device.rocm":
        "{value} n'est pas un mode de périphérique : les paquets ROCm et CUDA de PyTorch "
        "utilisent tous deux le nom de périphérique 'cuda', utilisez donc --device gpu (la "
        "valeur par défaut)",
    "arg.device.unknown": "doit être gpu ou cpu, valeur reçue : {value}",
    "api.argument": "check({parameter}=...) : {reason}",
    "api.device.rocm":
        "{value} n'est pas un mode de périphérique : les paquets ROCm et CUDA de PyTorch "
        "utilisent tous deux le nom de périphérique 'cuda', utilisez donc device='gpu' (la "
        "valeur par défaut)",
    "api.type.device": "check(device=...) attend un str, 'gpu' ou 'cpu' ; pas {type}",
    "api.type.device_index": "check(device_index=...) attend un int ; pas {type}",
    "api.type.timeout":
        "check(timeout=...) attend des secondes sous forme d'int ou de float ; pas {type}",
    "api.type.host_check": "check(host_check=...) attend True ou False ; pas {type}",
    "api.type.python":
        "check(python=...) attend le chemin de l'interpréteur sous forme de str ou "
        "d'os.PathLike, ou None ; pas {type}",
    "arg.python.missing":
        "ce fichier n'existe pas ; donnez le chemin de l'interpréteur (dans un "
        "environnement virtuel, bin/python, ou Scripts\\python.exe sous Windows)",
    "arg.python.dangling":
        "c'est un lien vers un interpréteur qui n'existe plus : le Python à partir "
        "duquel cet environnement virtuel a été créé a été supprimé ou mis à jour ; recréez "
        "l'environnement",
    "arg.python.folder":
        "c'est un dossier ; donnez l'interpréteur qu'il contient (dans un "
        "environnement virtuel, bin/python, ou Scripts\\python.exe sous Windows)",
    "arg.python.not_executable":
        "ce fichier n'est pas exécutable ; donnez l'interpréteur lui-même (dans un "
        "environnement virtuel, bin/python)",
    "arg.python.not_runnable":
        "le système ne peut pas lancer ce fichier (un script dont l'interpréteur "
        "manque, ou un programme pour un autre système ou processeur)",
    "arg.python.not_python":
        "ce programme n'est pas un interpréteur Python : il s'est exécuté, mais n'a "
        "pas répondu comme tel",
    "arg.python.too_old":
        "cet interpréteur est Python {version} ; le minimum est {minimum}",
    "cli.output.dash":
        "--output - créerait un fichier nommé '-' : pour le rapport JSON sur la sortie standard "
        "utilisez --format json ; pour un fichier vraiment nommé '-' écrivez ./-",
    "cli.output.preflight":
        "impossible d'écrire le rapport dans le fichier demandé : {reason}. Rien n'a été "
        "exécuté (code de sortie {exit}).",
    "cli.output.not_saved":
        "le rapport n'a PAS été enregistré : {reason} (code de sortie {exit}, "
        "OUTPUT_WRITE_FAILED).",
    "cli.stdout.saved":
        "le rapport a été enregistré dans le fichier demandé, mais n'a pas pu être écrit sur la "
        "sortie standard : {reason} (code de sortie {exit}, {code}).",
    "cli.stdout.lost":
        "le résultat n'a pas pu être écrit sur la sortie standard : {reason} (code de sortie "
        "{exit}, {code}).",
    "output.reason.empty": "le nom du fichier est vide",
    "output.reason.exists_file": "un fichier de ce nom existe déjà ; il n'est jamais écrasé",
    "output.reason.exists_link":
        "un lien symbolique de ce nom existe déjà ; il n'est jamais écrasé",
    "output.reason.exists_folder": "un dossier de ce nom existe déjà",
    "output.reason.exists_device":
        "ce nom est un périphérique, pas un fichier ordinaire ; le rapport n'est écrit que dans "
        "un nouveau fichier",
    "output.reason.exists_fifo":
        "ce nom est un tube nommé (FIFO), pas un fichier ordinaire ; le rapport n'est écrit que "
        "dans un nouveau fichier",
    "output.reason.exists_socket":
        "ce nom est une socket, pas un fichier ordinaire ; le rapport n'est écrit que dans un "
        "nouveau fichier",
    "output.reason.no_folder": "son dossier n'existe pas",
    "output.reason.not_a_folder": "son dossier n'est pas un dossier",
    "output.reason.not_writable": "son dossier n'est pas accessible en écriture",
    "output.reason.name_too_long": "le nom du fichier est trop long",
    "output.reason.permission": "permission refusée",
    "output.reason.no_space": "plus d'espace disponible sur le périphérique",
    "output.reason.too_large":
        "le fichier dépasse la taille autorisée (limite de taille de fichier)",
    "output.reason.quota": "quota de disque dépassé",
    "output.reason.read_only": "le système de fichiers est en lecture seule",
    "output.reason.loop": "trop de niveaux de liens symboliques",
    "output.reason.nul":
        "le nom du fichier contient un caractère NUL",
    "output.reason.trailing_separator":
        "le nom se termine par un séparateur de dossier : indiquez un nom de fichier",
    "output.reason.unencodable":
        "le nom du fichier ne peut pas être encodé pour ce système de fichiers",
    "output.reason.no_folder_tilde":
        "son dossier n'existe pas (un ~ initial n'est pas votre dossier personnel ici : le shell "
        "ne l'a pas développé ; écrivez le chemin complet)",
    "output.reason.closed": "elle est fermée",
    "output.reason.other": "le système a refusé l'écriture ({detail})",
    "check.interrupted":
        "interrompu par {signal} ; la vérification a été arrêtée et aucun rapport n'a été écrit.",
    # -- toutes les commandes (la vérification, compare, summarize) ------------------------------
    "command.interrupted": "interrompu par {signal}.",
    "command.internal_error":
        "erreur interne ({detail}) ; merci de la signaler en indiquant la commande exécutée.",
    "command.help.debug": "affiche une trace d'appels si l'outil lui-même échoue",

    # -- compare and summarize (reports read back; JSON output keeps ids, not these texts) -------
    "reports.reason.not_found": "introuvable",
    "reports.reason.not_a_file": "pas un fichier ordinaire",
    "reports.reason.permission": "permission refusée",
    "reports.reason.unreadable": "illisible",
    "reports.reason.not_json": "pas du JSON",
    "reports.reason.schema_version":
        "version de schéma {version} (cette version de l'outil lit la version 1)",
    "reports.reason.not_a_report": "pas un rapport",
    "reports.reason.too_large": "trop grand pour être un rapport (plus de {limit})",
    "reports.help.format":
        "format de sortie : text (par défaut), json ou markdown (à coller dans un ticket)",
    "reports.help.lang": "langue de la sortie texte et markdown (par défaut ici : {default})",
    "compare.help.description":
        "Montre ce qui a changé entre deux rapports de la vérification : code, étape, versions, "
        "périphériques, constats et durées par étape (une durée compte quand elle a varié d'au "
        "moins 100 ms et 20 pour cent). Sortie 0 quand les deux ont le même code, 1 quand le code "
        "a changé, 2 quand un fichier n'est pas un rapport lisible.",
    "compare.help.a": "le rapport précédent (le JSON écrit avec --output)",
    "compare.help.b": "le rapport suivant",
    "compare.argument": "{which} ({name}) : {reason}",
    "compare.cannot_read": "comparaison impossible : {what}",
    "compare.same_code": "même code : {code}",
    "compare.code_changed": "le code a changé : {a} -> {b}",
    "compare.nothing_else": "rien d'autre n'a changé",
    "compare.header.field": "champ",
    "compare.findings_added": "constats apparus dans B : {ids}",
    "compare.findings_removed": "constats disparus dans B : {ids}",
    "summarize.help.description":
        "Résume de nombreux rapports de la vérification, par exemple collectés sur plusieurs "
        "machines : une ligne par rapport, puis le nombre de chaque code, du pire au meilleur, "
        "puis les fichiers qui ne sont pas des rapports lisibles, avec la raison.",
    "summarize.help.paths":
        "un fichier de rapport, ou un dossier parcouru récursivement à la recherche de *.json",
    "summarize.help.epilog":
        "Ordre des codes, du pire au meilleur : {order}. Sortie 0 quand tous les rapports ont "
        "réussi et que tous les fichiers étaient lisibles, 1 quand un rapport a échoué ou qu'un "
        "fichier était illisible, 2 en cas d'erreur d'utilisation ou quand aucun rapport lisible "
        "n'a été trouvé.",
    "summarize.header.report": "rapport",
    "summarize.header.code": "code",
    "summarize.header.exit": "sortie",
    "summarize.header.stage": "étape",
    "summarize.header.python": "python",
    "summarize.header.torch": "torch",
    "summarize.header.backend": "backend",
    "summarize.header.devices": "périphériques",
    "summarize.header.count": "nombre",
    "summarize.counts": "nombre par code, du pire au meilleur",
    "summarize.unreadable": "illisibles ({count})",
    "summarize.total":
        "{files} fichier(s) : {reports} rapport(s), {passed} réussi(s), {failed} en échec, "
        "{unreadable} illisible(s)",
    "summarize.nothing_found": "aucun fichier à lire dans les chemins donnés",
}
